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
