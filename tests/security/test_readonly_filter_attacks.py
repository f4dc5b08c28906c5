"""The read-only filter under attack, through the real bot: commands that read as harmless to
a filter that parses the text differently from bash must not run without a human's yes.

With the ``standard`` profile a command the filter calls read-only runs without asking, in a
*writable* sandbox (only plan mode adds the read-only wall), so the filter is the only guard:
each command below writes to the workspace when bash reads the text itself.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from tests.security.hostile import Hostile, planning

HOSTILE = [
    "sed s/a/b/ notes.txt$IFS-i",  # $IFS splits the word: sed -i
    "sort notes.txt$IFS-oout",  # a later word turns a read into a write
    "git diff -U --output=f HEAD",  # -U takes no separate value: --output is an option
    "git log -1 --output=f",
    "sort --out=f notes.txt",  # getopt_long resolves the abbreviation to --output
    "sed s/a/b/ notes.txt -i",  # GNU permutes options after operands
    "find . {-name,notes.txt,-delete}",  # braces expand to -delete
    """gawk '{ if (1) / "/; print > "out"; "/" # "\n}' notes.txt""",  # gawk: a regex, not `/`
    "xxd notes.txt -l5",  # xxd stops reading options at its first file: -l5 is the output
    "tree -Lo 1 out",  # tree: -L and -o each take the next word
    'cat "$(sed -i s/a/b/ notes.txt)"',  # a substitution's inner command writes
    "ls $(sort notes.txt -o out)",
    "diff <(sed -i s/a/b/ notes.txt) notes.txt",  # a process substitution's inner writes
]


def _state(workspace: Path) -> dict[str, str]:
    return {
        str(p.relative_to(workspace)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(workspace).parts
    }


def _bash(command: str) -> Any:
    return tool_turn(ToolCall("bash_execute", {"command": command}))


async def test_commands_bash_reads_as_writes_ask_first_and_a_deny_changes_nothing(
    hostile: Any,
) -> None:
    scene: Hostile = await hostile([*(_bash(c) for c in HOSTILE), text_turn("done")])
    (scene.workspace / "notes.txt").write_text("alpha\nbanana\n")
    before = _state(scene.workspace)
    await scene.ana.send(scene.channel, "have a look at the notes")
    for command in HOSTILE:
        request = scene.channel.last_message
        shown = request.content + "".join(str(embed.to_dict()) for embed in request.embeds)
        assert command.split()[0] in shown, f"no permission request for {command!r}"
        await scene.ana.click(request, label="Deny")
    assert _state(scene.workspace) == before
    results = scene.tool_results()
    assert len(results) == len(HOSTILE)
    assert all("denied" in result for result in results)


async def test_plan_mode_refuses_them_naming_the_construct(hostile: Any) -> None:
    scene = await planning(hostile, [_bash(c) for c in HOSTILE[:3]], profile="open")
    results = scene.tool_results()
    assert len(results) == 3
    assert "`$IFS`" in results[0]
    assert "`$IFS`" in results[1]
    assert "`git diff --output` writes to a file" in results[2]


async def test_what_runs_is_what_was_judged(hostile: Any) -> None:
    """The glob was expanded when judged; a file the command itself cannot create changes
    nothing, and the tool result shows the judged words ran."""
    scene: Hostile = await hostile([_bash("printf '[%s]' *.md"), text_turn("done")])
    for name in ("a.md", "b.md"):
        (scene.workspace / name).write_text("")
    expected = "".join(f"[{p.name}]" for p in sorted(scene.workspace.glob("*.md")))
    await scene.ana.send(scene.channel, "list the docs")
    [result] = scene.tool_results()
    assert result.startswith(expected)


async def test_a_substitution_s_output_is_data_never_shell(hostile: Any) -> None:
    """The inner command runs first (read-only) and its output is quoted into the judged
    structure: text that would be a second command, a substitution or an option to bash is
    only printed, so it runs without asking and writes nothing."""
    smuggles = ["; touch PWNED", "$(touch PWNED)", "`touch PWNED`", "' ; touch 'PWNED"]
    commands = [
        f'echo "$(cat smuggle{i})"' if i % 2 else f"cat <(cat smuggle{i})"
        for i in range(len(smuggles))
    ]
    scene: Hostile = await hostile([*(_bash(c) for c in commands), text_turn("done")])
    for i, text in enumerate(smuggles):
        (scene.workspace / f"smuggle{i}").write_text(text + "\n")
    before = _state(scene.workspace)
    await scene.ana.send(scene.channel, "read the files")
    results = scene.tool_results()
    assert len(results) == len(smuggles)
    for text, result in zip(smuggles, results, strict=True):
        assert result.startswith(text + "\n[exit code 0]"), result
    assert _state(scene.workspace) == before
    assert not (scene.workspace / "PWNED").exists()


_NPROC_RULE = {
    "command": "nproc",
    "long_flags": ["all"],
    "operands": "none",
    "match": ["nproc", "nproc --all"],
    "not_match": ["nproc extra"],
}


async def test_an_operator_rule_decides_in_plan_mode(hostile: Any) -> None:
    """``shell.read_only_rules`` reach the agent's shell: the rule's command runs in plan mode
    without asking, and its ``not_match`` example is refused."""
    config = {"shell": {"read_only_rules": [_NPROC_RULE]}}
    scene = await planning(hostile, [_bash("nproc --all"), _bash("nproc extra")], config=config)
    first, second = scene.tool_results()
    assert first.rstrip().endswith("[exit code 0] [ran in the read-only sandbox]")
    assert first.split("\n")[0].isdigit(), first
    assert "exit code" not in second
    assert "plan_mode_refusal" in second
    assert "`nproc` takes no operands here (`extra`)" in second
