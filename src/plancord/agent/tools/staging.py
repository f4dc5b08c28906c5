"""Staged judging of a command line: command substitutions run first, read-only, bounded.

The classifier in ``core`` is pure: for ``ls "$(git rev-parse --show-toplevel)"/src`` it
answers "run this inner script first, then judge again with its output". This module is the
caller that may spawn: it runs each inner script (already judged read-only, rendered with
every word quoted) in the read-only, offline sandbox, bounded in time and output, and hands
the output back as data. Exceeding a bound is a denial naming the bound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from plancord.core.shell.readonly import Verdict, classify
from plancord.core.shell.readonly.operator_rules import OperatorRule
from plancord.core.shell.readonly.substitution import MAX_SUBSTITUTIONS
from plancord.sandbox import SandboxPolicy, SandboxUnavailable, run_sandboxed

STAGE_TIMEOUT_SECONDS: Final = 5.0
"""An inner command running longer is killed and the command line denied."""

STAGE_MAX_OUTPUT: Final = 64 * 1024
"""An inner command printing more bytes denies the command line."""


def judge_staged(
    command: str,
    workspace: Path,
    rules: Sequence[OperatorRule] = (),
    *,
    ran: list[str] | None = None,
) -> Verdict:
    """The verdict on ``command``, running its stages (command substitutions, a ``while
    read`` loop's input) first when they are read-only; each stage's script that ran is
    appended to ``ran``. Blocking: call it off the event loop (the dispatcher runs it in a
    thread)."""
    verdict = classify(command, workspace, rules)
    if verdict.stage is None:
        return verdict
    policy = SandboxPolicy.read_only(workspace.resolve()).behind_inner_wall()
    return asyncio.run(
        _staged(command, workspace, rules, verdict, policy, [] if ran is None else ran)
    )


async def _staged(
    command: str,
    workspace: Path,
    rules: Sequence[OperatorRule],
    verdict: Verdict,
    policy: SandboxPolicy,
    ran: list[str],
) -> Verdict:
    outputs: dict[str, str] = {}
    for _ in range(MAX_SUBSTITUTIONS):
        if verdict.stage is None or verdict.stage_key is None:
            return verdict
        inner = f"`{verdict.stage_key}`"
        try:
            result = await run_sandboxed(
                ["bash", "-c", verdict.stage],
                policy,
                timeout=STAGE_TIMEOUT_SECONDS,
                max_output=STAGE_MAX_OUTPUT,
            )
        except SandboxUnavailable as exc:
            return Verdict(False, f"the stage {inner} could not run: {exc}")
        except OSError as exc:
            return Verdict(False, f"the stage {inner} could not run: {exc.strerror or exc}")
        if result.timed_out:
            return Verdict(
                False,
                f"the stage {inner} ran longer than "
                f"{STAGE_TIMEOUT_SECONDS:g} s (the bound for a stage)",
            )
        if result.truncated:
            return Verdict(
                False,
                f"the stage {inner} printed more than "
                f"{STAGE_MAX_OUTPUT // 1024} KiB (the bound for a stage)",
            )
        ran.append(verdict.stage)
        outputs[verdict.stage_key] = result.stdout
        verdict = classify(command, workspace, rules, outputs)
    if verdict.stage is not None:
        return Verdict(False, f"the command line has more than {MAX_SUBSTITUTIONS} substitutions")
    return verdict
