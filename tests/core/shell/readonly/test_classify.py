"""The filter as a whole: everyday exploration runs, the reasons name the construct, and what
runs is the judged structure re-rendered."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from plancord.core.shell.readonly import MAX_COMMAND_BYTES, Verdict, classify


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "README.md").write_text("# readme\n")
    (root / "notes.txt").write_text("a\nb\n")
    (root / "app.py").write_text("print('hi')  # TODO\n")
    (root / "tool.py").write_text("# TODO\n")
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text("# guide\n")
    (root / "docs" / "faq.md").write_text("# faq\n")
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text("# TODO main\n")
    (root / ".hidden.py").write_text("")
    (root / "nested").mkdir()
    subprocess.run(["git", "init", "-q", str(root / "nested")], check=True)
    return root


EVERYDAY = [
    "git log -p -3",
    "rg -n TODO src",
    "wc -l *.py",
    "cat docs/*.md | head",
    "git show HEAD:README.md",
    "find . -name '*.py' | xargs grep -n TODO",
    "ls -la",
    "ls -la src/ docs",
    "cat README.md",
    "head -n 40 app.py",
    "head -5 *.md",
    "tail -n 100 notes.txt",
    "grep -rn 'TODO' src/",
    "grep -rn --include='*.py' TODO .",
    "rg -i --type py -g '!tests' TODO",
    "git status --short",
    "git diff --stat HEAD",
    "git log --oneline --graph --all -20",
    "git blame -L 1,5 app.py",
    "git branch -a",
    "git rev-parse --show-toplevel",
    "git ls-files | wc -l",
    "sed -n '1,20p' app.py",
    "awk '{print $1}' notes.txt | sort | uniq -c | sort -rn",
    "sort -u notes.txt",
    "diff -u README.md notes.txt",
    "find src -type f -name '*.py' -newer README.md",
    "du -sh .",
    "stat README.md",
    "file README.md",
    "echo hello; pwd",
    "printf '%s\\n' a b",
    "cd src && ls -la && cat main.py",
    "git status 2>/dev/null || echo no-repo",
    "cat < notes.txt | nl -ba",
    "jq -r .name package.json 2>/dev/null",
    "seq 1 10 | tr '\\n' ' '",
    "grep -c x notes.txt >/dev/null 2>&1",
    "cat /usr/share/common-licenses/GPL-3 | head -3",
    "test -f README.md && echo yes",
    "[ -d src ] && ls src",
    "command -v git",
    "git log --format='%h %s' -5",
    "rg --files | head",
    "cat README.md # show the readme",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_everyday_exploration_runs_without_asking(command: str, workspace: Path) -> None:
    verdict = classify(command, workspace)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None


REASONS = [
    ("echo $HOME/*", "glob joined to `$HOME`"),
    ("cat ${FILE:-x}", "parameter expansion"),
    ("echo $(ls)", "command substitution"),
    ("echo `ls \\`", "backslash inside backquotes"),
    ("echo $((a+1))", "arithmetic"),
    ("echo $'a'", "$'…'"),
    ("cat ~/.bashrc", "tilde"),
    ("echo (ls)", "subshells"),
    ("ls &", "background"),
    ("cat <<EOF\n$x\nEOF", "quote its delimiter"),
    ("diff <(ls) <(ls src)", "process substitution"),
    ("FOO=1 ls", "assignment"),
    ("until true; do touch x; done", "`touch` changes files"),
    ("ls > out.txt", "writes to a file"),
    ("ls {a,b}", "brace expansion"),
    ("cat /proc/1/environ", "`/proc`"),
    ("cat /proc/1/environ", "`/proc`"),
    ("cd .. && ls *", "outside the workspace"),
    ("cat /dev/urandom", "devices"),
    ("git -c core.pager=x log", "changes configuration"),
    ("git log --output=x", "writes to a file"),
    ("git log --outp=x", "write it in full"),
    ("git diff --no-index a b", "outside the repository"),
    ("cd nested && git log", "another git repository"),
    ("sort -o out notes.txt", "writes its output"),
    ("sort --comp=x notes.txt", "runs a program"),
    ("sort --s notes.txt", "ambiguous"),
    ("sed -i s/a/b/ notes.txt", "edits files in place"),
    ("sed 'w out' notes.txt", "write to files"),
    ("sed 's/a/b/e' notes.txt", "runs the result"),
    ("awk 'BEGIN{system(\"ls\")}'", "system()"),
    ("awk '{print > \"out\"}' notes.txt", "writes to a file"),
    ("awk '{print | \"sh\"}' notes.txt", "pipes"),
    ("find . -exec rm {} +", "only simple readers"),
    ("find . -delete", "deletes files"),
    ("find . -fprint out", "writes to a file"),
    ("rg --pre cat x", "runs other programs"),
    ("rg -z x", "runs other programs"),
    ("xxd notes.txt out", "writes to OUT"),
    ("tail -f notes.txt", "never ends"),
    ("seq inf", "plain numbers"),
    ("seq 1 100000000", "over 10,000,000"),
    ("xargs rm < notes.txt", "only simple readers"),
    ("rm -rf src", "changes files"),
    ("bash -c ls", "another shell"),
    ("./app.py", "by its path"),
    ("python3 app.py", "runs code"),
    ("cd src; ls", "`cd DIR && …`"),
    ("ls |", "ends with `|`"),
    ("x" * (MAX_COMMAND_BYTES + 1), "longer than"),
    ("ls\x00", "control character"),
    ("grep -e", "needs a value"),
    ("sort -k --output=x notes.txt", "looks like an option"),
    ("uniq notes.txt out", "at most 1 file"),
    ("jq -n env", "environment"),
    ("git stash", "saves and resets"),
    ("git push", "uses the network"),
    ("git branch new", "only listing forms"),
    ("git config user.name x", "--get"),
]


@pytest.mark.parametrize(("command", "expected"), REASONS)
def test_denials_name_the_construct(command: str, expected: str, workspace: Path) -> None:
    verdict = classify(command, workspace)
    assert not verdict.allowed
    assert verdict.script is None
    assert expected in verdict.reason


def test_what_runs_is_the_structure_with_every_word_quoted(workspace: Path) -> None:
    verdict = classify("grep -n TODO *.py 2>/dev/null | head -3 && echo 'it''s' done", workspace)
    assert verdict.script == (
        "'grep' '-n' 'TODO' 'app.py' 'tool.py' 2>'/dev/null' | 'head' '-3' && 'echo' 'its' 'done'"
    )


def test_globs_expand_like_bash_hidden_files_and_no_match(workspace: Path) -> None:
    assert classify("ls *.py", workspace).script == "'ls' 'app.py' 'tool.py'"
    assert classify("ls .*.py", workspace).script == "'ls' '.hidden.py'"
    assert classify("ls *.nothing", workspace).script == "'ls' '*.nothing'"
    assert classify("ls '*.py'", workspace).script == "'ls' '*.py'"
    assert classify("ls */*.md", workspace).script == "'ls' 'docs/faq.md' 'docs/guide.md'"
    assert classify("ls d?cs/[a-g]*.md", workspace).script == "'ls' 'docs/faq.md' 'docs/guide.md'"


def test_a_glob_cannot_reach_outside_the_workspace(workspace: Path) -> None:
    assert "outside the workspace" in classify("cat ../*", workspace).reason
    assert "outside the workspace" in classify("ls /etc/*", workspace).reason


def test_a_symlink_out_of_the_workspace_is_a_read_only_the_sandbox_hides(
    workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "secret").write_text("s")
    link = workspace / "link-out"
    link.symlink_to(tmp_path / "secret")
    try:
        verdict = classify("cat link-out", workspace)
        assert verdict.allowed
        assert verdict.outside_view == (str((tmp_path / "secret").resolve()),)
        hidden = verdict.without_view()
        assert not hidden.allowed
        assert "no sandbox layer hides the host" in hidden.reason
    finally:
        link.unlink()


def test_a_named_pipe_in_the_workspace_is_refused(workspace: Path) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    try:
        assert "never end" in classify("cat pipe", workspace).reason
    finally:
        fifo.unlink()


@pytest.mark.parametrize("value", [None, 42, b"ls", ["ls"]])
def test_non_text_is_denied_without_raising(value: object) -> None:
    assert classify(value) == Verdict(False, "the command is not text")


def test_an_internal_error_denies(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> None:
    module = importlib.import_module("plancord.core.shell.readonly.classify")

    def explode(*_: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(module, "read", explode)
    verdict = module.classify("ls", workspace)
    assert not verdict.allowed
    assert "RuntimeError" in verdict.reason


def _cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plancord.command.main", "check-bash", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_check_bash_allows_and_shows_what_runs(workspace: Path) -> None:
    result = _cli("ls *.py", "--workspace", str(workspace))
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        "allowed: read-only: ls",
        "  runs: 'ls' 'app.py' 'tool.py'",
    ]


def test_check_bash_json_gives_each_reason_and_exits_1_on_a_deny(workspace: Path) -> None:
    result = _cli("--json", "--workspace", str(workspace), stdin="ls\necho $IFS\n")
    assert result.returncode == 1
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["allowed"] for r in records] == [True, False]
    assert records[0]["runs"] == "'ls'"
    assert "$IFS" in records[1]["reason"]
    assert records[1]["runs"] is None


def test_check_bash_explain_names_the_family_that_decided(workspace: Path) -> None:
    lines = (
        "find . -name '*.py' -exec wc -l {} + <<< x\nfor f in *.py; do echo \"$PWD\"; done | less\n"
    )
    result = _cli("--json", "--explain", "--workspace", str(workspace), stdin=lines)
    assert result.returncode == 0, result.stdout
    found, looped = [json.loads(line) for line in result.stdout.splitlines()]
    assert found["decided_by"][0].startswith("find [find and the readers -exec runs]: ")
    assert found["read_as"] == ["a here-string: input given as quoted text (heredoc)"]
    assert looped["read_as"] == [
        "`$PWD`: the starting directory (parameters)",
        "a loop or `if` piped or joined: run as a `{ …; }` group (compound)",
    ]
    assert looped["decided_by"][-1].startswith("less [readers without a terminal]: ")
