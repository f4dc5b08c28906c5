"""Operator rules (``shell.read_only_rules``): checked against their own examples when the
config is read, deciding only the commands they name, and shown by ``check-bash --explain``.

The allowed commands run for real in the scratch repository from the script the filter
rendered; a rule whose example comes out wrong is a config error naming that example.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.config import ConfigError, parse_config_text
from plancord.core.shell.readonly import classify
from plancord.core.shell.readonly.operator_rules import OperatorRule
from tests.core.shell.readonly.scratch import run

RULES = """
shell:
  read_only_rules:
    - command: nproc
      long_flags: [all]
      long_values: [ignore]
      operands: none
      match: ["nproc", "nproc --all", "nproc --ignore 1"]
      not_match: ["nproc extra", "nproc --bogus"]
    - command: dpkg -l
      operands: text
      match: ["dpkg -l bash"]
      not_match: ["dpkg -i x.deb", "dpkg -l --admindir=/tmp bash", "dpkg"]
"""


@pytest.fixture
def rules() -> tuple[OperatorRule, ...]:
    return parse_config_text(RULES).shell.operator_rules


@pytest.mark.parametrize(
    "command", ["nproc", "nproc --all | wc -l", "dpkg -l bash > /dev/null && nproc"]
)
def test_a_rule_allows_its_command_and_the_script_runs(
    command: str, rules: tuple[OperatorRule, ...], scratch: Path
) -> None:
    assert not classify(command, scratch).allowed  # unknown without the operator's rule
    verdict = classify(command, scratch, rules)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    result = run(verdict.script, scratch)
    assert result.harm is None
    assert result.returncode == 0, result.output


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("nproc > out", "writes to a file"),
        ("nproc $(touch x)", "command substitution"),
        ("nproc ../x", "takes no operands"),
        ("dpkg -i x.deb", "package manager"),
        ("dpkg -l --admindir=/tmp", "not an option"),
        ("dpkg -l bash | xargs rm", "only simple readers"),
    ],
)
def test_a_rule_decides_only_its_command(
    command: str, expected: str, rules: tuple[OperatorRule, ...], scratch: Path
) -> None:
    verdict = classify(command, scratch, rules)
    assert not verdict.allowed
    assert expected in verdict.reason


@pytest.mark.parametrize(
    ("rule", "example"),
    [
        ("{command: nproc, match: ['nproc --all']}", "nproc --all"),
        (
            "{command: nproc, long_flags: [all], match: [nproc], not_match: ['nproc --all']}",
            "nproc --all",
        ),
        (
            "{command: nproc, operands: paths, match: ['nproc /proc/1/environ']}",
            "/proc/1/environ",
        ),
    ],
)
def test_a_rule_whose_example_fails_is_a_config_error_naming_it(rule: str, example: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_config_text(f"shell:\n  read_only_rules:\n    - {rule}\n")
    assert example in str(error.value)
    assert "read_only_rules" in str(error.value)


def test_check_bash_explain_names_the_deciding_rule(tmp_path: Path, scratch: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(RULES)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "plancord.command.main",
            "check-bash",
            "--explain",
            "--json",
            "--config",
            str(config),
            "--workspace",
            str(scratch),
        ],
        input="nproc --all | wc -l\nrm notes.txt\nsort -o out notes.txt\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["decided_by"] == [
        "nproc: operator rule `nproc` (shell.read_only_rules)",
        "wc [text tools]: option table from wc(1), GNU coreutils 9.1",
    ]
    assert records[1]["decided_by"] == ["rm: the list of refused commands"]
    assert records[2]["decided_by"] == [
        "sort [text tools]: option table from sort(1), GNU coreutils 9.1"
    ]


def test_check_bash_explain_in_text(scratch: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "plancord.command.main",
            "check-bash",
            "--explain",
            "git log -1",
            "--workspace",
            str(scratch),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert "  decided by: git [git]: git._check_git" in result.stdout.splitlines()


def test_a_rule_allows_the_project_s_own_read_only_script(scratch: Path) -> None:
    """The README's example: a rule naming a script in the workspace by its path."""
    script = scratch / "scripts" / "stats.sh"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\nwc -l notes.txt\n")
    script.chmod(0o755)
    config = (
        "shell: {read_only_rules: [{command: ./scripts/stats.sh, operands: none, "
        "match: [./scripts/stats.sh]}]}"
    )
    rules = parse_config_text(config).shell.operator_rules
    assert not classify("./scripts/stats.sh", scratch).allowed
    verdict = classify("./scripts/stats.sh", scratch, rules)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    assert run(verdict.script, scratch).output == b"5 notes.txt\n"
    assert not classify("./scripts/stats.sh x", scratch, rules).allowed
    assert not classify("scripts/stats.sh", scratch, rules).allowed


@pytest.mark.parametrize("command", ["../x.sh", "./../x.sh", "scripts/../../x.sh", "/bin/sh"])
def test_a_rule_names_no_script_outside_the_workspace(command: str) -> None:
    with pytest.raises(ConfigError):
        parse_config_text(
            f"shell:\n  read_only_rules:\n    - {{command: '{command}', match: [x]}}\n"
        )
