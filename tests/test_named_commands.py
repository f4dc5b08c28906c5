"""What plancord tells an operator to run exists: the completion card's note for a diff
past Discord's limit names a command the argument parser accepts."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from plancord.command.main import build_parser
from plancord.discord_bot.result_card.diff_file import _prepare


def test_the_cut_diff_note_names_a_real_command(tmp_path: Path) -> None:
    diff = tmp_path / "big.diff"
    diff.write_bytes(b"".join(f"+line {n} {n * 7919}\n".encode() for n in range(20_000)))

    attachment = _prepare(diff, "plancord-ada", limit=1_000)

    (named,) = re.findall(r"`(plancord [^`]+)`", attachment.note or "")
    words = shlex.split(named.replace("NAME", "ada"))[1:]
    args = build_parser().parse_args(words)
    assert args.func.__name__ != "_cmd_run"
    assert words[:2] == ["plan", "result-diff"]


def test_config_goes_before_or_after_the_operator_action(tmp_path: Path) -> None:
    config = tmp_path / "x.yaml"
    for words in (
        ["plan", "--config", str(config), "status", "--agent", "ada"],
        ["plan", "status", "--agent", "ada", "--config", str(config)],
        ["--config", str(config), "plan", "status", "--agent", "ada"],
        ["agents", "--config", str(config), "list"],
    ):
        assert build_parser().parse_args(words).config == config, words


def test_an_actions_help_does_not_repeat_the_groups_note() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    agents = sub.choices["agents"]
    agents_sub = next(a for a in agents._actions if isinstance(a, argparse._SubParsersAction))
    assert "every decision is audited" in agents.format_help()
    assert "every decision is audited" not in agents_sub.choices["list"].format_help()
