"""The README's two commands are the ones CI and users run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fenced_after(text: str, heading: str) -> str:
    match = re.search(re.escape(heading) + r".*?```(?:sh|bash)?\n(.+?)\n```", text, re.S)
    assert match, f"no command block after {heading!r}"
    return match.group(1).strip()


def test_ci_runs_exactly_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    command = fenced_after(readme, "Run the tests")
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in ci_lines


def test_the_readme_run_command_starts_the_bot() -> None:
    readme = (ROOT / "README.md").read_text()
    command = fenced_after(readme, "Run the bot")
    assert command.endswith("plancord run")
    assert "pip install" in command
