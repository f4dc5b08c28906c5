"""The README's commands are the ones CI and users run, and every relative link in the README
and docs/ leads to a file (and a heading) that exists."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


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


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces to -."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        missing_anchor = bool(anchor) and path.suffix == ".md" and anchor not in anchors(path)
        if not path.exists() or missing_anchor:
            broken.append(target)
    assert broken == []


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in relative_links(ROOT / "README.md")}
    assert [p.name for p in PAGES[1:] if p.resolve() not in linked] == []


def readme_commands() -> list[list[str]]:
    """Every ``plancord …`` command the README shows, as argv after ``plancord``."""
    text = (ROOT / "README.md").read_text()
    found = re.findall(r"`(?:\.venv/bin/)?plancord ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", text)
    found += re.findall(r"\.venv/bin/plancord ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", text)
    commands = {tuple(c.split()) for c in found}
    return sorted([list(c) for c in commands])


#: Run in a fresh interpreter: ``plancord <command> --help`` for each command given as JSON,
#: through the CLI's own ``main`` (one import of plancord for them all, not one each); each
#: command's exit status and what it wrote to stderr, as JSON.
HELP_OF_EACH = r"""
import contextlib, io, json, sys
from plancord.command.main import main
results = []
for words in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main([*words, "--help"])
        except SystemExit as exc:
            code = exc.code
    results.append([words, code, err.getvalue()])
print(json.dumps(results))
"""


def test_the_readme_commands_exist() -> None:
    commands = readme_commands()
    assert ["plan", "diff"] in commands
    assert ["demo"] in commands and ["agents", "list"] in commands
    asked = [[w for w in argv if w not in {"--agent", "web", "ada"}] for argv in commands]
    done = subprocess.run(
        [sys.executable, "-c", HELP_OF_EACH, json.dumps(asked)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert [words for words, _, _ in answers] == asked
    for words, code, err in answers:
        assert code in (0, None), (words, code, err)


def test_the_readme_setup_config_is_valid_and_requires_bubblewrap() -> None:
    from plancord.config import parse_config_text
    from plancord.sandbox import LayerChoice

    readme = (ROOT / "README.md").read_text()
    match = re.search(r"Give it the tokens and a config.*?```yaml\n(.+?)\n```", readme, re.S)
    assert match, "no yaml block in the README's setup"
    config = parse_config_text(match.group(1))
    assert config.sandbox.layer is LayerChoice.BUBBLEWRAP
    assert config.discord.dev_guild_id is not None


def test_the_readme_puts_prerequisites_and_the_demo_before_setup() -> None:
    readme = (ROOT / "README.md").read_text()
    order = ["**Prerequisites:**", "python3-venv", "plancord demo", "## Why plancord", "## Setup"]
    positions = [readme.find(part) for part in order]
    assert -1 not in positions and positions == sorted(positions), positions
