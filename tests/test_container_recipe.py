"""The container and service recipes hold what runs for months: the seccomp profile allows
the calls current runtimes allow, the secrets folder stays out of git, systemd does not
restart a config error forever, the two-process compose snippet waits for a healthy
database and restarts, and the compose header leaves the user's umask as it was."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: System calls the default profiles of current container runtimes (moby and containerd
#: since 2024-2025, podman's containers-common) allow, which programs and libcs use when
#: the kernel has them: a profile refusing them breaks agents on a new kernel.
CURRENT_RUNTIME_CALLS = (
    "cachestat",
    "fchmodat2",
    "futex_waitv",
    "listmount",
    "map_shadow_stack",
    "mseal",
    "statmount",
)


def test_the_seccomp_profile_allows_the_calls_current_runtimes_allow() -> None:
    profile = json.loads((ROOT / "seccomp-bubblewrap.json").read_text())
    allowed = {
        name
        for rule in profile["syscalls"]
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args")
        for name in rule["names"]
    }
    missing = [name for name in CURRENT_RUNTIME_CALLS if name not in allowed]
    assert missing == []


def test_secrets_are_ignored_by_git() -> None:
    ignored = (ROOT / ".gitignore").read_text().splitlines()
    assert "secrets/" in ignored
    done = subprocess.run(
        ["git", "-C", str(ROOT), "check-ignore", "-q", "secrets/discord_token"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_the_systemd_unit_does_not_restart_a_config_error() -> None:
    (unit,) = list(_fenced((ROOT / "docs/operations.md").read_text(), "ini"))
    lines = unit.splitlines()
    assert "Restart=on-failure" in lines
    assert "RestartPreventExitStatus=2" in lines


def test_the_two_process_compose_snippet_restarts_and_waits_for_a_healthy_database() -> None:
    import yaml

    snippets = [
        yaml.safe_load(block)
        for block in _fenced((ROOT / "docs/operations.md").read_text(), "yaml")
        if "bot-0" in block
    ]
    (compose,) = snippets
    services = compose["services"]
    assert services["db"]["healthcheck"]["test"][1].startswith("pg_isready")
    for name in ("db", "bot-0", "bot-1"):
        assert services[name]["restart"] == "unless-stopped", name
    for name in ("bot-0", "bot-1"):
        assert services[name]["depends_on"] == {"db": {"condition": "service_healthy"}}


def test_the_compose_header_leaves_the_shells_umask(tmp_path: Path) -> None:
    header = []
    for line in (ROOT / "compose.example.yaml").read_text().splitlines():
        if not line.startswith("#"):
            break
        command = line.removeprefix("#").strip()
        if line.startswith("#   ") and command and not command.startswith(("sudo ", "docker ")):
            header.append(command)
    script = "\n".join(["umask 022", *header, "umask"])
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "DISCORD_TOKEN": "d", "ANTHROPIC_API_KEY": "a"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0022"
    assert (tmp_path / "secrets" / "discord_token").stat().st_mode & 0o077 == 0
