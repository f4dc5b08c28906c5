"""What plancord tells an operator to run exists: the completion card's note for a diff
past Discord's limit names a command the argument parser accepts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from plancord.cli import build_parser
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
