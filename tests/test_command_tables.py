"""The command tables of the README and docs/operations.md against the real parser: every
documented command and flag exists, and every command the parser has is documented in both.

A row is a Markdown table row whose first cell starts with ``plancord``, such as
``| `plancord plan status\\|approve --agent NAME [--revision N]` | … |``: its commands are the
words before the first placeholder or flag, ``\\|`` separating alternatives, and its flags
every ``--name`` in the row, each of which must belong to one of the row's commands (or to
``plancord`` itself)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from plancord.command.main import build_parser

ROOT = Path(__file__).resolve().parent.parent
TABLES = (ROOT / "README.md", ROOT / "docs" / "operations.md")
ROW = re.compile(r"^\| `plancord(?P<usage>(?: [^`]*)?)` \|(?P<rest>.*)\|\s*$", re.MULTILINE)
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def leaves(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = subcommands(parser)
    if not found and path:
        yield path, parser
    for name, child in found.items():
        yield from leaves(child, (*path, name))


def flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def documented(text: str) -> Iterator[tuple[str, list[tuple[str, ...]], set[str]]]:
    """Each row: its text, the command paths it names, the flags it mentions."""
    for match in ROW.finditer(text):
        words = match["usage"].replace("\\|", "|").split()
        if words and words[0].endswith(":"):
            continue  # a message quoted in a troubleshooting table, not a command
        paths: list[tuple[str, ...]] = [()]
        for word in words:
            if word.startswith(("-", "[")) or not word.islower():
                break
            paths = [(*p, alt) for p in paths for alt in word.split("|")]
        yield match[0], paths, set(FLAG.findall(match[0]))


@pytest.mark.parametrize("page", TABLES, ids=lambda p: p.name)
def test_every_documented_command_and_flag_exists(page: Path) -> None:
    parser = build_parser()
    wrong = []
    for row, paths, mentioned in documented(page.read_text()):
        known = flags(parser)
        for path in paths:
            node: argparse.ArgumentParser | None = parser
            for word in path:
                node = subcommands(node).get(word) if node is not None else None
            if node is None:
                wrong.append(f"no command plancord {' '.join(path)}: {row[:80]}")
                continue
            known |= flags(node)
            # A group's flags (plancord plan --config) and each of its actions' flags.
            known |= {f for _, leaf in leaves(node) for f in flags(leaf)}
        wrong += [f"no flag {flag} for {paths}: {row[:80]}" for flag in mentioned - known]
    assert wrong == []


@pytest.mark.parametrize("page", TABLES, ids=lambda p: p.name)
def test_every_command_is_documented(page: Path) -> None:
    named = {path for _, paths, _ in documented(page.read_text()) for path in paths}
    missing = [
        "plancord " + " ".join(path) for path, _ in leaves(build_parser()) if path not in named
    ]
    assert missing == []


def test_a_row_naming_a_command_that_does_not_exist_is_caught() -> None:
    rows = list(documented("| `plancord plan status\\|result-diffs --agent NAME` | x |\n"))
    assert rows[0][1] == [("plan", "status"), ("plan", "result-diffs")]
    assert "result-diffs" not in subcommands(subcommands(build_parser())["plan"])


def test_no_action_repeats_its_groups_note() -> None:
    for path, leaf in leaves(build_parser()):
        assert "every decision is audited" not in leaf.format_help(), path
