"""How long the read-only filter takes, next to the process spawn every shell call pays.

Plan mode judges each shell command before it runs; the check must cost under a quarter of
a process spawn. Commands are judged in this repository (globs expand against its files);
when it is a linked worktree (whose ``.git`` file points outside, which the sandbox will not
show) a local clone of it is used, so the stages can run as they do in an agent's workspace.
Run it with ``.venv/bin/python benchmarks/bench_readonly.py``.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from plancord.agent.tools.staging import judge_staged
from plancord.core.shell.readonly import MAX_COMMAND_BYTES, MAX_COMMANDS, MAX_WORDS, classify
from plancord.sandbox import SandboxPolicy, run_sandboxed

WORKSPACE = Path(__file__).resolve().parent.parent

REALISTIC = [
    "ls",
    "ls -la",
    "ls -la src/",
    "pwd",
    "tree -L 2 src",
    "cat README.md",
    "cat pyproject.toml",
    "head -n 50 src/plancord/command/main.py",
    "tail -n 100 logs/app.log",
    "wc -l src/plancord/*.py",
    "stat setup.cfg",
    "file src/plancord/py.typed",
    "du -sh .",
    "git status",
    "git status -sb",
    "git log --oneline -n 20",
    "git log -p -3 -- src/plancord/command/main.py",
    "git diff",
    "git diff --stat HEAD~1",
    "git diff --cached",
    "git show HEAD --stat",
    "git branch -a",
    "git blame -L 1,40 src/plancord/command/main.py",
    "git ls-files | head -50",
    "git grep -n 'def main'",
    "git rev-parse --show-toplevel",
    "git remote -v",
    "grep -rn 'TODO' src/",
    "grep -rn --include='*.py' 'import bashlex' .",
    "grep -c 'def ' src/plancord/command/main.py",
    "rg -n 'classify' src tests",
    "rg --type py -l 'async def'",
    "find . -name '*.py' -not -path './.venv/*'",
    "find src -type f -name '*.py' | wc -l",
    "find . -maxdepth 2 -type d",
    "sed -n '1,80p' src/plancord/command/main.py",
    "sed -n '/^def /p' src/plancord/command/main.py",
    "awk -F: '{print $1}' /etc/passwd",
    "awk '{ s += $2 } END { print s }' data.txt",
    "sort -u names.txt | head",
    "grep -h '^import' src/**/*.py | sort | uniq -c | sort -rn | head -20",
    "cut -d, -f1 data.csv | sort | uniq -c",
    "jq '.scripts' package.json",
    "jq -r '.[] | .name' data.json",
    "diff -u old.txt new.txt",
    "cd src && ls -la",
    "cd tests && grep -rn fixture .",
    "ls 2>/dev/null || echo none",
    "test -f setup.py && cat setup.py",
    "echo $HOME",
    "echo $(git rev-parse HEAD)",
    "wc -l $(git ls-files '*.py')",
    'for f in src/*.py; do wc -l "$f"; done',
    "which python3",
    "uname -a",
    "date +%Y-%m-%d",
    "rm -rf build",
    "sed -i 's/a/b/' file.txt",
    "python3 -m pytest -q",
    "git commit -am wip",
]

EVERYDAY = [
    # the examples of everyday exploration refused before
    "tree -L 2",
    "date -u +%F",
    "uname -a",
    "git -C src log --oneline -5",
    "git config user.email",
    'ls "$(git rev-parse --show-toplevel)"/src',
    'for f in src/*.py; do head -3 "$f"; done',
    "diff <(git show HEAD~1:README.md) README.md",
    "find / -name '*.conf'",
    # and their neighbours
    "ps aux",
    "id -un",
    "git tag --contains HEAD",
    "git branch --no-color",
    "git config --get remote.origin.url",
    "tail +2 pyproject.toml",
    "xxd -l 32 README.md",
    "seq 1 0.5 3",
    "jq .name package.json",
    "find src -name '*.py' | xargs wc -l",
    "git ls-files | xargs grep -l TODO",
    "awk '{ s += $2 / 2 } END { print s / NR }' pyproject.toml",
    "cat /etc/os-release",
    "ls /usr/share/doc | head",
    "git grep -n 'def main'",
    "sha256sum pyproject.toml",
    # loops, if, [[ ]], test, arithmetic, subshells and backquotes, as an agent types them
    'git ls-files src/plancord/core | while read -r f; do wc -l "$f"; done',
    'find src -name "*.toml" -o -name "py.typed" | while read -r f; do echo "$f"; done',
    'while IFS= read -r line; do echo "$line"; done < .gitignore',
    "if [ -f pyproject.toml ]; then head -5 pyproject.toml; fi",
    "if git diff --quiet; then echo clean; else git diff --stat; fi",
    "if [[ -d tests ]]; then ls tests | head; else echo no tests; fi",
    "[[ -f README.md ]] && head -20 README.md",
    '[[ "$(git rev-parse --abbrev-ref HEAD)" == main ]] || git log --oneline -3',
    "test -d .git && git log --oneline -1",
    "[ -s pyproject.toml ] && echo present",
    "(cd src && ls)",
    "(cd src/plancord && grep -rn TODO . | head -5)",
    "cd tests && ls | head",
    "echo $(( 60 * 60 * 24 ))",
    "echo `git rev-parse --short HEAD`",
    'for f in src/plancord/*.py; do [[ -s "$f" ]] && wc -l "$f"; done',
    'for d in src tests; do if [ -d "$d" ]; then echo "$d"; fi; done',
]
"""Everyday exploration that must run without asking; the false-deny rate is measured here."""

HARMFUL = [
    "if true; then rm -f nothing-here; fi",
    'printf "x\\n" | while read -r f; do rm "$f"; done',
    'while read -r f; do sed -i s/a/b/ "$f"; done < .gitignore',
    "[[ -v a[$(touch PWNED)] ]]",
    "(( a[$(touch PWNED)] ))",
    "echo `touch PWNED`",
    "(cd .. && touch PWNED)",
    "[[ -f README.md ]] && touch PWNED",
    "if true; then cat README.md > out; fi",
]
"""Harmful variants of the same constructs: none may be judged read-only."""

ROUND_THREE = [
    # unquoted substitutions as file lists
    "wc -l $(git ls-files '*.py')",
    "grep -n def $(git ls-files 'src/plancord/core/shell/readonly/*.py')",
    "rg -n TODO $(git ls-files 'src/*.py')",
    # here-strings and here-documents
    "grep -c foo <<< 'foo bar foo'",
    'grep -q TODO <<< "$(git log -1 --format=%B)" || echo none',
    "cat <<'EOF'\nnotes $HOME\nEOF",
    # case, groups, until, !, a loop piped or joined, read with several names
    'case "$(uname)" in Linux) echo linux;; esac',
    "case README.md in *.md) head -1 README.md;; *) echo other;; esac",
    "{ ls; echo; } | wc -l",
    "until true; do ls; done",
    'git ls-files docs | until ! read -r f; do head -1 "$f"; done',
    "! grep -q nothing-here README.md",
    'for f in src/plancord/*.py; do wc -l "$f"; done | sort -n',
    'git status --short && for f in docs/*.md; do head -1 "$f"; done',
    "git log -3 --format='%h %s' | while read -r hash subject; do echo \"$hash\"; done",
    # parameters
    'echo "$HOME"',
    'basename "$PWD"',
    "echo ${PWD##*/}",
    "ls ~+/src",
    "command -v rg && rg --version",
    "ls 2>&-",
    # find -exec with a reader
    "find src -name '*.py' -exec grep -l TODO {} +",
    "find docs -name '*.md' -exec wc -l {} \\;",
    "find src -maxdepth 2 -type f -exec head -1 {} +",
    # programs that only read
    "less README.md",
    "more README.md",
    "man ls",
    "fd -e py",
    "file *",
    "ls -ld */",
    "python --version",
    "python3 -V",
    "git fsck",
    "git archive HEAD | tar -t",
    "git format-patch --stdout -1",
    "awk '{print > \"/dev/stderr\"}' pyproject.toml",
    # reads the sandbox shows outside the workspace
    "cd .. && git status",
    "realpath ../lib",
    "grep -rn TODO / 2>/dev/null",
    "(cd .. && ls)",
]
"""The round-three issue's examples of everyday exploration: the false denies left."""

HARMFUL_ROUND_THREE = [
    "wc -l $(git ls-files '*.py') > out",
    "rm $(git ls-files '*.py')",
    "$(echo rm) README.md",
    "find . -name '*.py' -exec rm {} +",
    "find . -exec sed -i s/a/b/ {} \\;",
    "find . -name x -execdir rm {} +",
    "cat <<EOF\n$(touch PWNED)\nEOF",
    "sh <<< 'touch PWNED'",
    'cat "$HOME/.ssh/id_rsa"',
    'rm -rf "$PWD/build"',
    "{ ls; touch PWNED; } | wc -l",
    'for f in x; do rm "$f"; done | wc -l',
    'git ls-files | until ! read -r f; do rm "$f"; done',
    "until [ -e PWNED ]; do touch PWNED; done",
    "case x in x) rm README.md;; esac",
    "case a in a) ls;& b) touch PWNED;; esac",
    "git format-patch -1",
    "git archive -o out.tar HEAD",
    "git archive HEAD | tar -x",
    "python3 -c 'import os'",
    "less '+!touch PWNED' README.md",
    "man ./README.md",
    "awk '{print > \"out\"}' README.md",
    # until/while LIST, read into several names, reads outside the workspace
    "until touch PWNED || true; do ls; done",
    "while true; do rm README.md; done",
    "until false; do ls; done > out",
    'printf \'rm README.md\\n\' | while read -r verb file; do "$verb" "$file"; done',
    "printf 'x README.md\\n' | while read -r a b; do rm \"$b\"; done",
    "printf 'x:/proc/self/environ\\n' | while IFS=: read -r a b; do cat \"$b\"; done",
    "cat README.md > ../out",
    "cd .. && sort -o out README.md",
    "tee ../out < README.md",
    "git -C .. init",
    "cd .. && ls *",
    "git -C /usr/share log",
    "cat /proc/self/environ",
]
"""Harmful variants of the round-three families: none may be judged read-only."""

STAGED = [
    'git ls-files src/plancord/core/shell | while read -r f; do wc -l "$f"; done',
    'ls "$(git rev-parse --show-toplevel)"/src',
    "diff <(git show HEAD~1:README.md) README.md",
    'cat "$(git rev-parse --show-toplevel)/README.md" <(git log -1 --format=%s)',
]

PATHOLOGICAL = {
    "100 KB of text": "x" * 100_000,
    "$( 5000 deep": "$(" * 5000 + "ls" + ")" * 5000,
    "( 5000 deep": "(" * 5000,
    '"$( 2000 deep': '"$(' * 2000,
    "{ 3000 deep": "{ " * 3000,
    "glob over the whole tree": "ls */*/*/*/*/*",
}

AT_THE_LIMIT = {
    f"{MAX_COMMANDS} commands `ls;`": "ls;" * MAX_COMMANDS,
    f"{MAX_WORDS} words of `echo`": "echo " + "a " * (MAX_WORDS - 1),
    "8 KiB sed script": "sed -n '" + "p;" * (MAX_COMMAND_BYTES // 2 - 10) + "' README.md",
}


def measure(function: Callable[[], object], repeats: int) -> list[float]:
    """Seconds per call, ``repeats`` times."""
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        function()
        samples.append((time.perf_counter_ns() - start) / 1e9)
    return samples


def percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def row(label: str, seconds: float, spawn: float | None = None) -> str:
    ratio = f"{seconds / spawn:7.3f}x" if spawn else ""
    return f"  {label:<38} {seconds * 1e6:11.1f} µs  {ratio}"


def judge(command: str) -> object:
    return classify(command, WORKSPACE)


def report(
    label: str, everyday: Sequence[str], harmful: Sequence[str], workspace: Path | None = None
) -> None:
    """The false denies of ``everyday`` (judged as the agent's shell judges, stages run, in
    ``workspace``, this repository by default) and the harmful variants let through, which
    must be none."""
    where = workspace or WORKSPACE
    refused = [(c, v.reason) for c in everyday if not (v := judge_staged(c, where)).allowed]
    share = len(refused) / len(everyday)
    print(f"{label}: {len(everyday) - len(refused)} of {len(everyday)} allowed")
    print(f"  false denies: {len(refused)} ({share:.1%})")
    for command, reason in refused:
        print(f"    {command.splitlines()[0]}  <- {reason}")
    through = [c for c in harmful if judge_staged(c, where).allowed]
    print(f"  harmful variants judged read-only: {len(through)} of {len(harmful)}")
    for command in through:
        print(f"    {command}")


def _own_repository() -> None:
    """Judge in a clone when this checkout is a linked worktree (see the module docstring)."""
    global WORKSPACE
    if not (WORKSPACE / ".git").is_file():
        return
    clone = Path(tempfile.mkdtemp(prefix="bench-readonly-")) / "repo"
    subprocess.run(["git", "clone", "-q", str(WORKSPACE), str(clone)], check=True)
    WORKSPACE = clone


def main() -> None:
    _own_repository()
    for command in REALISTIC:
        judge(command)
    spawn = statistics.median(measure(lambda: subprocess.run(["true"], check=True), 200))
    rounds = 30
    samples: list[float] = []
    for _ in range(rounds):
        for command in REALISTIC:
            samples.extend(measure(functools.partial(judge, command), 1))
    allowed = sum(classify(c, WORKSPACE).allowed for c in REALISTIC)
    print(f"read-only filter: {len(REALISTIC)} realistic commands x {rounds} rounds")
    print(f"  ({allowed} allowed, {len(REALISTIC) - allowed} denied)")
    print(f"  {'':<38} {'time':>14}  {'÷ spawn':>8}")
    print(row("spawn `true` (subprocess.run), median", spawn, spawn))
    print(row("judge, median", statistics.median(samples), spawn))
    print(row("judge, p99", percentile(samples, 0.99), spawn))
    print(row("judge, max", max(samples), spawn))
    everyday = [(c, judge_staged(c, WORKSPACE)) for c in EVERYDAY]
    refused = [(c, v.reason) for c, v in everyday if not v.allowed]
    share = len(refused) / len(EVERYDAY)
    print(f"everyday exploration: {len(EVERYDAY) - len(refused)} of {len(EVERYDAY)} allowed")
    print(f"  false denies: {len(refused)} ({share:.0%}; the goal is at most 5%)")
    for command, reason in refused:
        print(f"    {command}  <- {reason}")
    harmful = [c for c in HARMFUL if judge_staged(c, WORKSPACE).allowed]
    print(f"harmful variants judged read-only: {len(harmful)} of {len(HARMFUL)}")
    for command in harmful:
        print(f"    {command}")
    report("round three", ROUND_THREE, HARMFUL_ROUND_THREE)
    loop = 'for f in src/plancord/core/shell/readonly/*.py; do head -3 "$f"; done'
    unrolled = statistics.median(measure(lambda: judge(loop), 50))
    print(row("judge a for loop over 20 files, median", unrolled, spawn))
    policy = SandboxPolicy.read_only(WORKSPACE).behind_inner_wall()
    floor = statistics.median(
        measure(lambda: asyncio.run(run_sandboxed(["true"], policy, timeout=5)), 10)
    )
    print("staged runs (inner command run in the read-only sandbox, then judged again):")
    print(row("sandboxed `true` (the floor), median", floor, spawn))
    for command in STAGED:
        staged = statistics.median(measure(functools.partial(judge_staged, command, WORKSPACE), 10))
        print(row(command[:38], staged, spawn) + f"  {staged / floor:5.2f}x the floor")
    print("worst cases (max of 5 runs):")
    for label, command in PATHOLOGICAL.items():
        worst = max(measure(functools.partial(judge, command), 5))
        print(row(label, worst, spawn))
    print("largest inputs let through, judged in full (max of 3 runs):")
    for label, command in AT_THE_LIMIT.items():
        worst = max(measure(functools.partial(judge, command), 3))
        print(row(label, worst, spawn))


if __name__ == "__main__":
    main()
