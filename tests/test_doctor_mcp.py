"""``plancord doctor`` starts each configured MCP server once and shows each tool's kind."""

from __future__ import annotations

import site
from pathlib import Path

from plancord.doctor import Status, diagnose

SERVERS = Path(__file__).resolve().parent / "fakes" / "mcp_servers"
SITE_PACKAGES = next(p for p in site.getsitepackages() if p.endswith("site-packages"))
TOKENS = {"DISCORD_TOKEN": "discord-secret-0123", "ANTHROPIC_API_KEY": "sk-ant-secret-4567"}


def test_doctor_lists_each_server_and_how_each_tool_is_classified(tmp_path: Path) -> None:
    server = (
        f"      command: /usr/bin/python3.11\n"
        f"      args: ['{SERVERS / 'tracker_server.py'}', '{SITE_PACKAGES}']\n"
        f"      mounts: ['{SITE_PACKAGES}', '{SERVERS}']\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text(
        "data_dir: state\nagents:\n  ada:\n    mcp_servers:\n"
        f"     tracker:\n{server.replace('      ', '       ')}"
        "       trust_hints: true\n       mutating: [sneaky_*]\n"
        "  bob:\n    mcp_servers:\n"
        f"     tracker:\n{server.replace('      ', '       ')}"
        "       read_only: [read_*]\n"
    )

    checks = [c for c in diagnose(config, environ=TOKENS) if "MCP server" in c.what]

    ada, bob = checks
    assert ada.status is Status.OK
    assert "read_issue read-only (hint: readOnlyHint)" in ada.what
    assert "sneaky_delete mutating (operator: mutating)" in ada.what
    assert bob.status is Status.FAIL and "(bob)" in bob.what
    assert "`close_issue`" in bob.problem


def test_each_server_is_judged_alone_in_a_git_workspace(tmp_path: Path) -> None:
    """``--repository .`` (mcp-server-git's README form) passes: the probe's workspace is a
    git repository; a failing server beside it does not mark it "not started"."""
    base = (
        f"        command: /usr/bin/python3.11\n        mounts: ['{SITE_PACKAGES}', '{SERVERS}']\n"
    )
    tracker = f"'{SERVERS / 'tracker_server.py'}', '{SITE_PACKAGES}'"
    config = tmp_path / "config.yaml"
    config.write_text(
        "data_dir: state\nagents:\n  ada:\n    mcp_servers:\n"
        f"      broken:\n{base}        args: [{tracker}, --die-loudly]\n"
        "        trust_hints: true\n"
        f"      git:\n{base}        args: [{tracker}, --repository, .]\n"
        "        trust_hints: true\n        mutating: [sneaky_*]\n"
    )

    checks = [c for c in diagnose(config, environ=TOKENS) if "MCP server" in c.what]

    broken, git = checks
    assert broken.status is Status.FAIL and "broken (ada)" in broken.what
    assert "database is missing" in broken.problem
    assert git.status is Status.OK, git.line()
    assert "read_issue read-only" in git.what


def test_a_server_is_probed_in_the_agents_own_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "state" / "agents" / "ada" / "workspace"
    (workspace / ".git").mkdir(parents=True)
    (workspace / "tracker.toml").write_text("[tracker]\n")
    config = tmp_path / "config.yaml"
    config.write_text(
        "data_dir: state\nagents:\n  ada:\n    mcp_servers:\n      tracker:\n"
        "        command: /usr/bin/python3.11\n"
        f"        args: ['{SERVERS / 'tracker_server.py'}', '{SITE_PACKAGES}',"
        " --needs, tracker.toml]\n"
        f"        mounts: ['{SITE_PACKAGES}', '{SERVERS}']\n"
        "        trust_hints: true\n        mutating: [sneaky_*]\n"
    )

    (check,) = [c for c in diagnose(config, environ=TOKENS) if "MCP server" in c.what]

    assert check.status is Status.OK, check.line()
    assert sorted(p.name for p in workspace.iterdir()) == [".git", "tracker.toml"]
