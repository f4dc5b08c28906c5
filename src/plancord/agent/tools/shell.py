"""``bash_execute``: the agent's shell, wired to the read-only classifier and the sandbox.

The tool is ``mutating`` because a shell can do anything. It reports the classifier's verdict
(``shell_verdict``) so the gate can still let read-only commands run in plan mode; a command
the filter allowed runs as the filter's re-rendered script, never as the model's text. It
runs every command through ``run_shell`` inside the agent's sandbox (``ctx.policy``): the
workspace read-only while planning, with the Landlock inner wall when the gate asked for it
(``ctx.sandbox``). Command substitutions whose inner command is read-only run first
(``staging``). The model may shorten the operator's timeout, never extend it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.agent.tools.staging import judge_staged
from plancord.core.gate import ToolKind
from plancord.core.shell.readonly import Verdict
from plancord.core.shell.readonly.operator_rules import OperatorRule
from plancord.core.shell.sandbox import ProcessResult, SandboxUnavailable, run_shell

MAX_COMMAND_CHARS = 20_000
MAX_TIMEOUT_SECONDS = 3600.0


class BashExecuteInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(
        min_length=1,
        max_length=MAX_COMMAND_CHARS,
        description="The bash command line to run in the workspace root.",
    )
    timeout_seconds: float | None = Field(
        default=None,
        gt=0,
        le=MAX_TIMEOUT_SECONDS,
        description=(
            "Stop the command after this many seconds. It cannot exceed the operator's "
            "limit (60 s unless configured otherwise), which is also the default."
        ),
    )


class BashExecuteTool(Tool[BashExecuteInput]):
    name: ClassVar[str] = "bash_execute"
    description: ClassVar[str] = (
        "Run a bash command in the workspace root and return its combined stdout and stderr "
        "with the exit code. No terminal and no input: interactive programs, pagers and "
        "prompts will not work (stdin is empty). Each call is a fresh shell: `cd` and "
        "variables do not carry over, so chain with `&&`. Output is capped (100 KB unless "
        "configured otherwise) and the command is killed at its timeout together with "
        "anything it started. Prefer view, glob, grep and the git tools where they fit. "
        "Commands run in a sandbox that sees only the workspace and the system's programs, "
        "with no network unless the operator allowed it. In plan mode only read-only "
        "commands run (ls, cat, grep, find without -exec, git log/show/diff, ...) and "
        "writing fails."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = BashExecuteInput

    def detail(self, args: BashExecuteInput) -> str:
        return args.command

    def shell_verdict(
        self, args: BashExecuteInput, workspace: Path, rules: Sequence[OperatorRule] = ()
    ) -> Verdict:
        return judge_staged(args.command, workspace, rules)

    async def run(self, args: BashExecuteInput, ctx: ToolContext) -> ToolResult:
        limit = ctx.shell.timeout_seconds
        timeout = min(args.timeout_seconds or limit, limit)
        # What the filter judged is what runs: its re-rendered script, never the text again.
        judged = ctx.verdict.script if ctx.verdict is not None and ctx.verdict.allowed else None
        try:
            result = await run_shell(
                judged or args.command,
                ctx.policy,
                timeout=timeout,
                max_output=ctx.shell.max_output_bytes,
            )
        except SandboxUnavailable as exc:
            return ToolResult.error(f"Not run: {exc}.")
        except OSError as exc:
            return ToolResult.error(f"Could not run the command: {exc.strerror or exc}.")
        return format_shell_result(result, timeout)


def format_shell_result(result: ProcessResult, timeout: float) -> ToolResult:
    """The output followed by one status line; a timeout is an error, a non-zero exit is not."""
    output = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its children were killed]"
    else:
        status = f"[exit code {result.exit_code}]"
    if result.read_only:
        status += " [ran in the read-only plan-mode sandbox]"
    return ToolResult(f"{output}\n{status}", is_error=result.timed_out)
