"""Staged judging in the shell tool: the inner command of a substitution runs in the real
read-only sandbox, bounded, and its output becomes data in the judged structure."""

from __future__ import annotations

from pathlib import Path

from plancord.agent.tools.staging import STAGE_MAX_OUTPUT, judge_staged
from plancord.core.shell.readonly.substitution import MAX_SUBSTITUTIONS


def test_the_inner_command_runs_read_only_and_its_output_is_a_word(workspace: Path) -> None:
    (workspace / "name").write_text("notes.txt\n")
    verdict = judge_staged('wc -c "$(cat name)"', workspace)
    assert verdict.allowed, verdict.reason
    assert verdict.script == "'wc' '-c' 'notes.txt'"


def test_the_inner_command_cannot_write(workspace: Path) -> None:
    verdict = judge_staged('cat "$(touch made)"', workspace)
    assert not verdict.allowed
    assert not (workspace / "made").exists()


def test_an_inner_output_past_the_bound_denies_naming_it(workspace: Path) -> None:
    (workspace / "big").write_text("x" * (STAGE_MAX_OUTPUT + 1))
    verdict = judge_staged('echo "$(cat big)"', workspace)
    assert not verdict.allowed
    assert f"more than {STAGE_MAX_OUTPUT // 1024} KiB" in verdict.reason


def test_more_substitutions_than_the_bound_deny(workspace: Path) -> None:
    words = " ".join(f'"$(echo {i})"' for i in range(MAX_SUBSTITUTIONS + 1))
    verdict = judge_staged(f"echo {words}", workspace)
    assert not verdict.allowed
    assert f"more than {MAX_SUBSTITUTIONS} substitutions" in verdict.reason


def test_every_distinct_substitution_runs(workspace: Path) -> None:
    verdict = judge_staged('echo "$(echo a)" "$(echo b)"-"$(echo a)"', workspace)
    assert verdict.allowed, verdict.reason
    assert verdict.script == "'echo' 'a' 'b-a'"
