"""The ``plancord`` command line as people expect it: bare ``plancord`` helps, ``--config``
goes before or after the command, and every command describes itself."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plancord.command.main import build_parser


def test_bare_plancord_prints_help_and_exits_0(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "plancord.command.main"],
        cwd=tmp_path,
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == ""
    listed = [
        line.split()[0]
        for line in done.stdout.split("positional arguments:")[1].splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert listed[:3] == ["demo", "doctor", "run"]
    assert {"migrate", "plan", "agents", "check-bash", "sandbox-run"} <= set(listed)


@pytest.mark.parametrize(
    "argv",
    [
        ["--config", "c.yaml", "doctor"],
        ["doctor", "--config", "c.yaml"],
        ["--config", "c.yaml", "run"],
        ["migrate", "--config", "c.yaml"],
        ["--config", "c.yaml", "plan", "status", "--agent", "ada"],
        ["plan", "status", "--agent", "ada", "--config", "c.yaml"],
        ["--config", "c.yaml", "agents", "list"],
    ],
    ids=" ".join,
)
def test_config_goes_before_or_after_the_command(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).config == Path("c.yaml")


def test_config_after_the_command_wins_and_absent_is_none() -> None:
    parser = build_parser()
    assert parser.parse_args(["--config", "a.yaml", "doctor", "--config", "b.yaml"]).config == (
        Path("b.yaml")
    )
    assert parser.parse_args(["doctor"]).config is None


def subcommands(
    parser: argparse.ArgumentParser, path: str = "plancord"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield f"{path} {name}", child
                yield from subcommands(child, f"{path} {name}")


def test_every_command_has_a_description() -> None:
    found = dict(subcommands(build_parser()))
    assert len(found) >= 15
    assert [name for name, parser in found.items() if not parser.description] == []
