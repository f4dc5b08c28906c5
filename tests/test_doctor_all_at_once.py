"""``plancord doctor`` checks what matters, all of it at once: every workspace root, every
token file, every config problem, the data directory before the database, and the right
fix for user namespaces that are blocked."""

from __future__ import annotations

import os
from pathlib import Path

from plancord.config import parse_config_text
from plancord.doctor import Status, check_tokens, diagnose
from plancord.doctor.workspaces import check_workspace_roots
from plancord.sandbox.userns import namespaces_blocked_by

TOKENS = {"DISCORD_TOKEN": "discord-secret-0123", "ANTHROPIC_API_KEY": "sk-ant-secret-4567"}


def test_every_workspace_root_is_checked_alone(tmp_path: Path) -> None:
    good = tmp_path / "repos"
    (good / "web" / ".git").mkdir(parents=True)
    config = parse_config_text(
        "workspace_roots: [/srv/no-such-repos, relative/dir, /etc/passwd, repos]\n",
        base_dir=tmp_path,
    )

    found = check_workspace_roots(config, euid=os.geteuid())

    assert [check.status for check in found] == [Status.FAIL, Status.FAIL, Status.FAIL, Status.OK]
    assert "does not exist" in found[0].line() and "mkdir -p /srv/no-such-repos" in found[0].fix
    assert f"{tmp_path}/relative/dir" in found[1].what and "does not exist" in found[1].problem
    assert "is not a directory" in found[2].problem


def test_a_repository_another_user_owns_is_warned(tmp_path: Path) -> None:
    (tmp_path / "web" / ".git").mkdir(parents=True)
    (tmp_path / "notes").mkdir()  # not a repository: its owner does not matter
    config = parse_config_text(f"workspace_roots: [{tmp_path}]\n")

    (check,) = check_workspace_roots(config, euid=os.geteuid() + 1)

    assert check.status is Status.WARN
    assert "1 repositories belong to another user (web)" in check.problem
    assert "chown" in check.fix


def test_two_unreadable_token_files_are_both_shown(tmp_path: Path) -> None:
    environ = {
        "DISCORD_TOKEN_FILE": str(tmp_path / "no-discord"),
        "ANTHROPIC_API_KEY_FILE": str(tmp_path / "no-anthropic"),
    }

    found = check_tokens(environ)

    assert [check.status for check in found] == [Status.FAIL, Status.FAIL]
    assert "no-discord" in found[0].line()
    assert "no-anthropic" in found[1].line()


def test_every_config_problem_is_listed(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("log_level: verbose\nshell:\n  timeout_seconds: 0\n")

    first = next(iter(diagnose(config, environ=TOKENS)))

    assert first.status is Status.FAIL
    assert "2 problems: (1)" in first.problem
    assert "log_level" in first.problem and "shell.timeout_seconds" in first.problem
    assert "more problem" not in first.line()


def test_a_data_dir_that_is_a_file_is_not_followed_by_run_migrate(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("a file")
    config = tmp_path / "config.yaml"
    config.write_text("data_dir: data\n")

    lines = [check.line() for check in diagnose(config, environ=TOKENS)]

    assert any(line.startswith("FAIL data directory") for line in lines), lines
    assert not any("plancord migrate" in line for line in lines), lines


def test_blocked_namespaces_get_the_fix_that_applies(tmp_path: Path) -> None:
    proc = tmp_path / "sys"
    (proc / "kernel").mkdir(parents=True)
    (proc / "kernel" / "unprivileged_userns_clone").write_text("0\n")
    cause, fix = namespaces_blocked_by("setting up uid map: Permission denied", proc_sys=proc)
    assert "kernel.unprivileged_userns_clone is 0" in cause
    assert fix.startswith("sudo sysctl -w kernel.unprivileged_userns_clone=1")

    (proc / "kernel" / "unprivileged_userns_clone").write_text("1\n")
    cause, fix = namespaces_blocked_by(
        "bwrap: sethostname: Operation not permitted", proc_sys=proc, container=True
    )
    assert "sethostname" in cause and "podman" in cause
    assert "--security-opt seccomp=seccomp-bubblewrap.json" in fix

    cause, fix = namespaces_blocked_by(
        "bwrap: No permissions to create new namespace", proc_sys=proc, container=True
    )
    assert "seccomp profile refuses the namespace calls" in cause
    assert "seccomp-bubblewrap.json" in fix
