"""``bash_execute``: the agent's shell, wired to the read-only classifier and the sandbox.

The tool is ``mutating`` because a shell can do anything. It reports the classifier's verdict
(``shell_verdict``) so the gate can let read-only commands run without asking; a command the
filter allowed runs as the filter's re-rendered script, never as the model's text. Command
substitutions whose inner command is read-only run first, read-only (``staging``).

The filter decides whether to ask; the sandbox decides what can happen. A command the filter
judged read-only runs without a human's Allow, so it runs in the read-only sandbox
(``ctx.read_only_policy``: the workspace read-only, no network) in every phase, and a wrong
judgement can neither write nor send. When such a command fails for want of write access the
result says so, and that the model may call again with ``write: true``: the call is then not
judged read-only, so the gate asks a human (and plan mode refuses it). Every other command
runs in the agent's own sandbox (``ctx.policy``). The model may shorten the operator's
timeout, never extend it.

Git's state is the host's: every command sees the repository's git directory read-only, so
``git commit``, ``git update-ref``, a planted hook or a ``git config`` in the shell fails.
When a command failed that way the result ends with :data:`GIT_WRITE_REFUSED`, naming the
git tools that do write (the host's own git runs).

Where no read-only wall holds (``sandbox.layer: off``, and ``plan_mode.shell_sandbox: off``
while planning) the built-in judgement still lets a command run unasked, but an operator
rule, which only says a command reads, does not (``Verdict.without_wall``), and no result
claims a sandbox that did not run. A read outside the workspace and the system paths is
judged by what the sandbox shows there (nothing), so where no sandbox layer hides the host
(``sandbox.layer: off``) such a command asks too (``Verdict.without_view``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from plancord.agent.tools.base import Tool, ToolContext, ToolResult, holds_read_only
from plancord.agent.tools.staging import judge_staged
from plancord.core.gate import ToolKind
from plancord.core.shell.readonly import Verdict
from plancord.core.shell.readonly.operator_rules import OperatorRule
from plancord.sandbox import ProcessResult, SandboxUnavailable, run_shell

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
    write: bool = Field(
        default=False,
        description=(
            "Set to true when the command must change files or use the network. A command "
            "that only reads runs without asking, in a read-only sandbox without network; "
            "with write=true a human is asked first (never possible in plan mode)."
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
        "writing fails. The repository's .git directory is read-only to every command: "
        "git commands that only read work, but commit, branch and checkout with the "
        "git_commit, git_branch and git_checkout tools."
    )
    kind: ClassVar[ToolKind] = ToolKind.MUTATING
    Input: ClassVar[type[BaseModel]] = BashExecuteInput

    def detail(self, args: BashExecuteInput) -> str:
        return args.command

    def shell_verdict(
        self,
        args: BashExecuteInput,
        workspace: Path,
        rules: Sequence[OperatorRule] = (),
        read_only_wall: bool = True,
        view: bool = True,
    ) -> Verdict:
        if args.write:
            return Verdict(False, "the call asks to write (`write: true`)")
        verdict = judge_staged(args.command, workspace, rules)
        verdict = verdict if read_only_wall else verdict.without_wall()
        return verdict if view else verdict.without_view()

    async def run(self, args: BashExecuteInput, ctx: ToolContext) -> ToolResult:
        limit = ctx.shell.timeout_seconds
        timeout = min(args.timeout_seconds or limit, limit)
        # What the filter judged is what runs: its re-rendered script, never the text again.
        judged = ctx.verdict.script if ctx.verdict is not None and ctx.verdict.allowed else None
        # Judged read-only, it runs unasked: the sandbox, not the judgement, keeps it so.
        policy = ctx.read_only_policy if judged is not None else ctx.policy
        try:
            result = await run_shell(
                judged or args.command,
                policy,
                timeout=timeout,
                max_output=ctx.shell.max_output_bytes,
            )
        except SandboxUnavailable as exc:
            return ToolResult.error(f"Not run: {exc}.")
        except OSError as exc:
            return ToolResult.error(f"Could not run the command: {exc.strerror or exc}.")
        return format_shell_result(result, timeout, walled=holds_read_only(policy))


#: What a program prints when the read-only sandbox refused a write: bubblewrap's read-only
#: bind gives EROFS, Landlock gives EACCES.
WRITE_REFUSALS = ("Read-only file system", "Permission denied")

WRITE_REFUSED = (
    "[read-only sandbox: a write was refused. The command was judged read-only, so it ran "
    "without asking, with the workspace read-only and no network. If it must write, call "
    "bash_execute again with write=true to ask a human.]"
)


#: How git and the shell report a refused write into a git directory: the kernel's error,
#: or git's own words when it does not pass the kernel's on.
_GIT_REFUSALS = (
    "Read-only file system",
    "unable to create directory for",
    "insufficient permission for adding an object",
)

GIT_WRITE_REFUSED = (
    "[the repository's .git directory is read-only to commands; to change the repository use "
    "the git_commit, git_branch or git_checkout tool]"
)


def _git_write_refused(result: ProcessResult) -> bool:
    """Whether a run that saw git directories read-only failed writing into one."""
    if not result.git_read_only or result.exit_code in (0, None):
        return False
    places = (".git", *result.git_read_only)
    for line in result.output.splitlines():
        if not any(refusal in line for refusal in _GIT_REFUSALS):
            continue
        if any(place in line for place in places) or line.startswith(("error:", "fatal:")):
            return True
    return False


def format_shell_result(result: ProcessResult, timeout: float, *, walled: bool) -> ToolResult:
    """The output followed by one status line; a timeout is an error, a non-zero exit is not.

    Only a run a read-only wall held (``walled``, see :func:`holds_read_only`) says it ran in
    the read-only sandbox. Such a run that failed saying a write was refused ends with
    :data:`WRITE_REFUSED` and is an error, so the model knows to ask instead of retrying. A
    run that failed writing into a git directory ends with :data:`GIT_WRITE_REFUSED` and is
    an error.
    """
    output = result.output.rstrip("\n") or "(no output)"
    if result.timed_out:
        status = f"[timed out after {timeout:g} s; the command and its children were killed]"
    elif result.cancelled:
        status = "[cancelled; the command and its children were killed]"
    else:
        status = f"[exit code {result.exit_code}]"
    if result.read_only and walled:
        status += " [ran in the read-only sandbox]"
        refused = any(marker in result.output for marker in WRITE_REFUSALS)
        if result.exit_code != 0 and refused:
            return ToolResult(f"{output}\n{status}\n{WRITE_REFUSED}", is_error=True)
    elif _git_write_refused(result):
        return ToolResult(f"{output}\n{status}\n{GIT_WRITE_REFUSED}", is_error=True)
    return ToolResult(f"{output}\n{status}", is_error=result.timed_out or result.cancelled)
