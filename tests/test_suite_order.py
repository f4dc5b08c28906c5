"""The files the suite starts first exist, so the list cannot go stale unnoticed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import SLOW_FIRST

ROOT = Path(__file__).resolve().parents[1]


def test_every_slow_first_file_exists() -> None:
    assert [path for path in SLOW_FIRST if not (ROOT / path).is_file()] == []
