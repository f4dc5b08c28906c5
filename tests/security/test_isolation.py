"""An agent steered by an attacker never reaches the host: played end to end through the
real bot under SimCord, with a scripted model issuing the hostile tool calls.

Each attack ran on the host before every agent process went through the sandbox: the
bot's environment and secret files were readable, a repository's config ran programs as
the bot's user, the database could be rewritten, and ``setsid`` children outlived the call.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import (
    FILE_SECRET,
    OTHER_SECRET,
    SECRETS,
    Hostile,
    host_environment_entries,
    instructed,
)

BASH = "bash_execute"


def bash(command: str) -> Any:
    return tool_turn(ToolCall(BASH, {"command": command}))


def _on_the_host(commands: list[str], cwd: Path | None = None) -> str:
    """Everything ``commands`` print when bash runs them on the host, without any wall."""
    output = []
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, check=False
        )
        output += [done.stdout, done.stderr]
    return "\n".join(output)


async def test_the_bots_environment_and_secret_files_never_reach_the_model(
    hostile: Any,
) -> None:
    commands = [
        r"tr '\0' '\n' < /proc/$PPID/environ",
        r"grep -a -h DISCORD /proc/[0-9]*/environ",
        r"tr '\0' '\n' < /proc/1/environ",
        "env",
        "cat {secret}",
        "cat {other}/notes.txt; ls {data}",
        "strings {data}/plancord.db | head -50",
    ]
    scene: Hostile = await hostile([], profile="open")
    where = {
        "secret": scene.secret_file,
        "other": scene.app.manager.workspace_of("other"),
        "data": scene.data_dir,
    }
    scene.world.server.add_turns(*[*(bash(c.format(**where)) for c in commands), text_turn("done")])
    await scene.ana.send(scene.channel, "look around")

    results = scene.ran(len(commands))
    assert scene.leaks() == []
    # Positive control: the same commands, run by bash on the host, read every secret.
    unwalled = await asyncio.to_thread(_on_the_host, [c.format(**where) for c in commands])
    assert [secret for secret in SECRETS if secret not in unwalled] == []
    host_entries = host_environment_entries()
    assert host_entries
    assert [entry for entry in host_entries if any(entry in text for text in results)] == []


async def test_a_repository_named_program_never_runs(hostile: Any) -> None:
    scene: Hostile = await hostile([], profile="open")
    marker = scene.workspace / "PWNED"
    bare_config = f"[core]\n\tbare = true\n[diff]\n\texternal = touch {marker}\n"
    files = {
        "evil/HEAD": "ref: refs/heads/main\n",
        "evil/config": bare_config,
        "evil/objects/info/.keep": "",
        "evil/refs/heads/.keep": "",
        "evil/a": "one\n",
        "evil/b": "two\n",
    }
    writes = [ToolCall("create_file", {"path": p, "content": c}) for p, c in files.items()]
    filter_config = (
        f'[filter "x"]\n\tclean = touch {marker}\n\tsmudge = touch {marker}\n'
        f'[diff "x"]\n\ttextconv = touch {marker}\n'
    )
    scene.world.server.add_turns(
        *[
            tool_turn(*writes),
            bash("cd evil && git diff --no-index a b"),
            bash("cd evil && git log -p"),
            bash(f"printf '%s' '{filter_config}' >> .git/config"),
            tool_turn(
                ToolCall(
                    "create_file", {"path": ".gitattributes", "content": "* filter=x diff=x\n"}
                )
            ),
            bash("echo changed >> app.py"),
            tool_turn(ToolCall("git_status", {}), ToolCall("git_diff", {})),
            bash("git diff; git add -A; git status --short"),
            text_turn("done"),
        ]
    )
    await scene.ana.send(scene.channel, "set things up")

    results = scene.ran(14)
    assert "[exit code 0]" in results[-1]
    assert not marker.exists()
    # Positive control: plain git on the host, in the same repository, runs the filter.
    await asyncio.to_thread(_on_the_host, ["git diff HEAD"], cwd=scene.workspace)
    assert marker.exists()


async def test_the_database_is_out_of_reach(hostile: Any) -> None:
    scene: Hostile = await hostile([], profile="open")
    database = scene.data_dir / "plancord.db"
    forge = (
        f"import sqlite3; db = sqlite3.connect({str(database)!r}); "
        "db.execute('DROP TRIGGER IF EXISTS audit_log_no_delete'); "
        "db.execute('DELETE FROM audit_log'); "
        "db.execute(\"UPDATE agents SET permission_profile = '{}'\"); db.commit()"
    )
    before = await scene.app.store.list_audit("ada")
    program = base64.b64encode(forge.encode()).decode()
    scene.world.server.add_turns(
        *[
            bash(f"echo {program} | base64 -d | python3"),
            bash(f"ls -la {scene.data_dir}"),
            text_turn("done"),
        ]
    )
    await scene.ana.send(scene.channel, "tidy up")

    forged, listed = scene.ran(2)
    assert "[exit code 0]" not in forged
    assert "unable to open database" in forged or "OperationalError" in forged, forged
    assert "plancord.db" not in listed
    assert "[exit code 0]" in listed, listed
    # Positive control: the same listing on the host shows the database.
    assert "plancord.db" in await asyncio.to_thread(_on_the_host, [f"ls -la {scene.data_dir}"])
    after = await scene.app.store.list_audit("ada")
    assert [a.action for a in after[: len(before)]] == [a.action for a in before]
    assert (await scene.app.store.get_agent("other")).permission_profile != {}


async def test_plan_mode_git_tools_run_no_repository_program(hostile: Any, tmp_path: Path) -> None:
    scene: Hostile = await hostile([])
    marker = tmp_path / "ran-on-the-host"
    with (scene.workspace / ".git" / "config").open("a") as config:
        config.write(f'[filter "x"]\n\tclean = touch {marker}\n\tprocess = touch {marker}\n')
        config.write(f'[diff "x"]\n\ttextconv = touch {marker}\n[core]\n\tpager = touch {marker}\n')
    (scene.workspace / ".gitattributes").write_text("* filter=x diff=x\n")
    (scene.workspace / "app.py").write_text("changed\n")
    index = (scene.workspace / ".git" / "index").read_bytes()
    script = [
        tool_turn(ToolCall("git_status", {}), ToolCall("git_diff", {}), ToolCall("git_log", {})),
        bash("git status; git diff; git log -p -1"),
    ]
    scene.world.server.add_turns(*script, text_turn("still exploring"))
    await scene.ana.slash(scene.channel, "plan start", task="look around")

    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    results = scene.ran(4)
    assert results[0].startswith("## "), results[0]
    assert not marker.exists()
    assert (scene.workspace / ".git" / "index").read_bytes() == index
    # Positive control: git run on the host, as a person would, runs the repository's program.
    await asyncio.to_thread(
        subprocess.run, ["git", "diff"], cwd=scene.workspace, capture_output=True, check=False
    )
    assert marker.exists()


async def test_plan_mode_reads_nothing_outside_the_workspace(hostile: Any) -> None:
    scene: Hostile = await hostile([])
    other = scene.app.manager.workspace_of("other")
    commands = [
        f"cat {other}/notes.txt",
        f"strings {scene.data_dir}/plancord.db",
        f"cat {scene.secret_file}",
        f"grep -r SECRET {scene.data_dir}",
        "cat ~/.git-credentials ~/.ssh/id_rsa",
    ]
    scene.world.server.add_turns(*[*(bash(c) for c in commands), text_turn("exploring")])
    await scene.ana.slash(scene.channel, "plan start", task="look around")

    results = scene.ran(len(commands))
    assert scene.leaks() == []
    assert all(OTHER_SECRET not in text for text in results)
    assert all("[exit code 0]" not in text for text in results), results
    # Positive control: on the host the same reads leak the other agent's notes and the file.
    unwalled = await asyncio.to_thread(_on_the_host, commands)
    assert OTHER_SECRET in unwalled
    assert FILE_SECRET in unwalled


def _processes_running(needle: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if needle.encode() in cmdline:
            found.append(int(entry))
    return found


async def test_nothing_the_command_starts_outlives_the_call(hostile: Any) -> None:
    scene: Hostile = await hostile([], profile="open")
    command = (
        "setsid sleep 314.25 > /dev/null 2>&1 < /dev/null & "
        "( (sleep 314.5 > /dev/null 2>&1 &) & ); nohup sleep 314.75 > /dev/null 2>&1 & "
        "echo started"
    )
    scene.world.server.add_turns(*[bash(command), text_turn("done")])
    await scene.ana.send(scene.channel, "start a daemon")

    assert "started" in scene.ran(1)[0]
    assert _processes_running("314.") == []


async def test_the_network_is_off(hostile: Any) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        port = server.getsockname()[1]
        connect = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
            "print('connected')"
        )
        scene: Hostile = await hostile([], profile="open")
        scene.world.server.add_turns(
            *[
                bash(f'python3 -c "{connect}"'),
                bash(f"exec 3<>/dev/tcp/127.0.0.1/{port}"),
                text_turn("done"),
            ]
        )
        await scene.ana.send(scene.channel, "call home")

        results = scene.ran(2)
        assert all("connected" not in r for r in results)
        assert all("[exit code 0]" not in r for r in results)
        refusals = ("Connection refused", "Network is unreachable")
        assert all(any(why in r for why in refusals) for r in results), results
        try:
            server.accept()
            raise AssertionError("the sandboxed command reached the host's listener")
        except BlockingIOError:
            pass
        # Positive control: the same command run on the host reaches the listener.
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-c", connect],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.stdout.strip() == "connected", done.stderr


async def test_a_memory_hog_stops_at_the_limit(hostile: Any) -> None:
    scene = await instructed(
        hostile,
        [bash("sort /dev/zero"), bash("python3 -c 'x = bytearray(1 << 30)'")],
        profile="open",
        config={"sandbox": {"memory_mb": 256}, "shell": {"timeout_seconds": 60}},
    )

    results = scene.ran(2)
    for result in results:
        assert "timed out" not in result
        assert "[exit code 0]" not in result
    assert "MemoryError" in results[1]
    assert json.dumps(results)
