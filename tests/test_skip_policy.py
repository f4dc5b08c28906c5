"""A skip that is not on tests/allowed_skips.txt fails a strict run (what CI runs), on one
worker and on two; a listed one does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import pytest

def test_runs() -> None:
    assert True

@pytest.mark.parametrize("n", [1, 2])
def test_needs_a_machine_feature(n: int) -> None:
    pytest.skip("this machine lacks it")
"""


def run(
    tmp_path: Path, *args: str, strict: bool, allowed: str = ""
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_probe.py").write_text(PROBE)
    listed = tmp_path / "allowed.txt"
    listed.write_text("# reasons\n" + allowed)
    env = {
        **os.environ,
        "PLANCORD_STRICT_SKIPS": "1" if strict else "0",
        "PLANCORD_ALLOWED_SKIPS": str(listed),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.skip_policy",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            *args,
            str(tmp_path / "test_probe.py"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "two-workers"])
def test_an_unlisted_skip_fails_a_strict_run(tmp_path: Path, workers: list[str]) -> None:
    done = run(tmp_path, *workers, strict=True)

    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 2 skipped" in done.stdout
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED: skipped")]
    assert len(failed) == 2
    assert "test_probe.py::test_needs_a_machine_feature[1]" in failed[0]
    assert failed[0].endswith("this machine lacks it")


def test_a_listed_skip_passes_a_strict_run(tmp_path: Path) -> None:
    entry = "test_probe.py::test_needs_a_machine_feature | the probe's machine lacks it\n"

    done = run(tmp_path, "-n", "2", strict=True, allowed=entry)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "FAILED" not in done.stdout


def test_without_strict_a_skip_is_only_a_skip(tmp_path: Path) -> None:
    done = run(tmp_path, strict=False)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed, 2 skipped" in done.stdout


def test_the_repository_list_parses() -> None:
    from tests.skip_policy import DEFAULT_LIST, allowed_skips

    for entry in allowed_skips(DEFAULT_LIST):
        assert "::" in entry, entry
