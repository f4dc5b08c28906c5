"""The read-only shell's families through the real bot in plan mode: for each, an everyday
command runs without asking (its output reaches the model, from the read-only sandbox) and a
harmful variant is refused before anything runs, writing nothing.

The families: ``case … esac``, ``until ! read``, ``find … -exec READER {} +``,
here-documents, ``{ …; }`` groups, ``! PIPELINE``, any other ``until``/``while`` loop,
``read`` into several names, and reads outside the workspace (judged by what the sandbox
shows there: nothing of the host). Where no sandbox layer hides the host, a read outside the
workspace is refused too, and the host's secret beside the workspace does not reach the
model.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile

BESIDE = "beside.txt"
HOST_SECRET = "the-host-secret-beside-the-workspace-39"
CLAIM = "[exit code 0] [ran in the read-only sandbox]"

# (family, everyday command, what its output holds, harmful variant)
FAMILIES = [
    (
        "case",
        "case notes.txt in *.md) echo markdown;; *.txt) wc -l notes.txt;; esac",
        "2 notes.txt\n",
        "case x in x) rm notes.txt;; esac",
    ),
    (
        "until ! read",
        'until ! read -r f; do echo "got $f"; done < list',
        "got notes.txt\n",
        'until ! read -r f; do rm "$f"; done < list',
    ),
    (
        "find -exec READER {} +",
        "find . -name notes.txt -exec grep -c a {} +",
        "2\n",
        "find . -name notes.txt -exec rm {} +",
    ),
    (
        "here-document",
        "cat <<'EOF'\nnotes for $HOME\nEOF",
        "notes for $HOME\n",
        "cat > copy <<'EOF'\nwritten\nEOF",
    ),
    (
        "{ …; } group",
        "{ echo one; cat notes.txt; } | wc -l",
        "3\n",
        "{ ls; rm notes.txt; } | wc -l",
    ),
    (
        "! PIPELINE",
        "! grep -q zebra notes.txt && echo absent",
        "absent\n",
        "! rm notes.txt",
    ),
    (
        "until LIST",
        "until grep -q alpha notes.txt; do echo waiting; done && echo found",
        "found\n",
        "until touch PWNED || true; do ls; done",
    ),
    (
        "read into several names",
        'while IFS=: read -r key value; do echo "$value"; done < pairs',
        "one\ntwo\n",
        'while read -r verb file; do "$verb" "$file"; done < commands',
    ),
    (
        "a read outside the workspace",
        f"cat ../{BESIDE}; cd .. && git status",
        "not a git repository",
        "cat notes.txt > ../copied-out",
    ),
]


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


async def _prepared(scene: Hostile) -> None:
    workspace = scene.workspace
    (workspace / "notes.txt").write_text("alpha\nbanana\n")
    (workspace / "list").write_text("notes.txt\n")
    (workspace / "pairs").write_text("a:one\nb:two\n")
    (workspace / "commands").write_text("rm notes.txt\n")
    (workspace.parent / BESIDE).write_text(HOST_SECRET)
    add = ["git", "add", "notes.txt", "list", "pairs", "commands"]
    await asyncio.to_thread(subprocess.run, add, cwd=workspace, check=True)


async def test_each_family_runs_unasked_in_plan_mode_and_its_harmful_variant_is_refused(
    hostile: Any,
) -> None:
    calls = [_bash(c) for _, everyday, _, harmful in FAMILIES for c in (everyday, harmful)]
    scene: Hostile = await hostile([*calls, text_turn("still exploring")])
    await _prepared(scene)
    workspace = scene.workspace
    before, around = _files(workspace), _files(workspace.parent)
    await scene.ana.slash(scene.channel, "plan start", task="look around")
    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    results = scene.tool_results()  # every result came back: nothing waited for a click
    assert len(results) == 2 * len(FAMILIES), results
    for index, (family, _, shows, _) in enumerate(FAMILIES):
        ran, refused = results[2 * index], results[2 * index + 1]
        assert shows in ran, f"{family}: {ran}"
        assert "plan_mode_refusal" not in ran, f"{family}: {ran}"
        assert ran.rstrip().endswith("[ran in the read-only sandbox]"), f"{family}: {ran}"
        assert "plan_mode_refusal" in refused, f"{family}: the harmful variant ran: {refused}"
        assert "exit code" not in refused, f"{family}: {refused}"
    assert _files(workspace) == before
    assert _files(workspace.parent) == around
    assert not (workspace / "PWNED").exists()
    assert HOST_SECRET not in "\n".join(results), "the host's file beside the workspace was read"


async def test_without_a_sandbox_layer_a_read_outside_the_workspace_is_refused(
    hostile: Any,
) -> None:
    """``sandbox.layer: off``: plan mode's inner wall still stops writes, but nothing hides
    the host from a read, so the filter's "the sandbox shows nothing there" does not hold."""
    outside = f"cat ../{BESIDE}"
    script = [_bash(outside), _bash("cat notes.txt"), text_turn("still exploring")]
    scene: Hostile = await hostile(script, config={"sandbox": {"layer": "off"}})
    await _prepared(scene)
    await scene.ana.slash(scene.channel, "plan start", task="look around")
    refused, read = scene.tool_results()
    assert "plan_mode_refusal" in refused, refused
    assert "no sandbox layer hides the host" in refused
    assert HOST_SECRET not in "\n".join(scene.tool_results())
    assert read.startswith("alpha\nbanana\n[exit code 0]"), read
