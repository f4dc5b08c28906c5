"""The tests the suite starts first exist, so the list cannot go stale unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import SLOW_FIRST, slow_rank

ROOT = Path(__file__).resolve().parents[1]


def _tests_of(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text("utf-8"))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {node.name for node in tree.body if isinstance(node, functions)}


def test_every_slow_first_file_and_test_exists() -> None:
    missing = []
    for entry in SLOW_FIRST:
        path, _, name = entry.partition("::")
        if not (ROOT / path).is_file() or (name and name not in _tests_of(path)):
            missing.append(entry)
    assert missing == []


def test_a_test_starts_at_its_own_entry_or_its_files_and_every_parameter_with_it() -> None:
    first = SLOW_FIRST[0]
    assert slow_rank(first) == 0
    assert slow_rank(f"{first}[x]") == 0
    startup = "tests/test_startup.py::test_run_is_up_before_discord_answers_and_a_signal_ends_it"
    assert slow_rank(f"{startup}[SIGTERM]") == SLOW_FIRST.index(startup)
    soak = "tests/reliability/test_soak_short.py::test_two_processes_on_postgres_one_killed"
    assert slow_rank(soak) == SLOW_FIRST.index("tests/reliability/test_soak_short.py")
    assert slow_rank("tests/command/test_cli.py::test_anything") == len(SLOW_FIRST)
