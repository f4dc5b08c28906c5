"""The run's skips held to a list: under ``PLANCORD_STRICT_SKIPS=1`` (CI sets it) a test
that skips and is not on ``tests/allowed_skips.txt`` fails the run.

Why: many security tests skip where the machine lacks what they need (bubblewrap that can
build namespaces, a Landlock ABI, a compiler, a program they run). Without this, a CI machine
missing one of those goes green with those tests silently left out. The list's path can be
set with ``PLANCORD_ALLOWED_SKIPS`` (the policy's own test uses that).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DEFAULT_LIST = Path(__file__).with_name("allowed_skips.txt")

_skipped: list[tuple[str, str]] = []


def _strict() -> bool:
    return os.environ.get("PLANCORD_STRICT_SKIPS") == "1"


def _list_path() -> Path:
    return Path(os.environ.get("PLANCORD_ALLOWED_SKIPS", str(DEFAULT_LIST)))


def allowed_skips(path: Path) -> list[str]:
    """The node ids (each also a prefix of its parameters) the list at ``path`` allows."""
    entries = [line.partition(" | ")[0].strip() for line in path.read_text().splitlines()]
    return [entry for entry in entries if entry and not entry.startswith("#")]


def unexpected(skipped: list[tuple[str, str]], allowed: list[str]) -> list[tuple[str, str]]:
    """The skips ``allowed`` does not name, by node id (workers report in any order)."""
    return sorted(
        (nodeid, reason)
        for nodeid, reason in skipped
        if not any(nodeid == entry or nodeid.startswith(entry + "[") for entry in allowed)
    )


def _on_controller(config: pytest.Config) -> bool:
    """Not an xdist worker: the controller (or a run without workers) sees every report."""
    return not hasattr(config, "workerinput")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else ""
        _skipped.append((report.nodeid, str(reason)))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if (
        _strict()
        and _on_controller(session.config)
        and unexpected(_skipped, allowed_skips(_list_path()))
    ):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (_strict() and _on_controller(terminalreporter.config)):
        return
    for nodeid, reason in unexpected(_skipped, allowed_skips(_list_path())):
        terminalreporter.write_line(
            f"FAILED: skipped, and not in {_list_path().name}: {nodeid}: {reason}", red=True
        )
