"""How often the read-only filter asks for a command a peer host calls safe, and whether it
lets through one the peer calls unsafe.

The lists are the read-only commands Codex's own test suite approves and refuses
(``codex-rs/core/src/command_safety/is_safe_command.rs``: its known-safe examples, its
``bash -lc`` examples with and without operators, and its unsafe ones), each written as
the command line bash would be given. A command the peer refuses only because its parser
cannot prove it (a subshell) is kept apart: it does no harm, so the filter may allow it.
Commands are judged as the agent's shell judges them (stages run) in a scratch repository
holding the files they name. Run it with ``.venv/bin/python benchmarks/bench_peers.py``.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from bench_readonly import report
from plancord.agent.tools.staging import judge_staged

SAFE = [
    "ls",
    "ls -1",
    "git status",
    "git branch",
    "git branch --show-current",
    "git -C . branch --show-current",
    "base64",
    "sed -n 1,5p file.txt",
    "sed -n '1,5p' file.txt",
    "nl -nrz Cargo.toml",
    "find . -name file.txt",
    "numfmt 1000",
    "tac Cargo.toml",
    "rg Cargo.toml -n",
    'grep -R "Cargo.toml" -n',
    'grep -R "Cargo.toml" -n || true',
    "ls && pwd",
    "echo 'hi' ; ls",
    "ls | wc -l",
]
"""What the peer approves without asking."""

UNSAFE = [
    "git branch -d feature",
    "git branch new-branch",
    "git -C . branch -d feature",
    "git checkout status",
    "git log --output=/tmp/git-log-out-test -n 1",
    "git diff --output /tmp/git-diff-out-test",
    "git show --output=/tmp/git-show-out-test HEAD",
    "git -c core.pager=cat log -n 1",
    "git -ccore.pager=cat status",
    "cargo check",
    "foo",
    "git fetch",
    "sed -n xp file.txt",
    "find . -name file.txt -exec rm {} \\;",
    "find . -name '*.py' -execdir python3 {} \\;",
    "find . -name file.txt -ok rm {} \\;",
    "find . -name '*.py' -okdir python3 {} \\;",
    "find . -delete -name file.txt",
    "find . -fls /etc/passwd",
    "find . -fprint /etc/passwd",
    "find . -fprint0 /etc/passwd",
    "find . -fprintf /root/suid.txt '%#m %u %p\\n'",
    "base64 -o out.bin",
    "base64 --output out.bin",
    "base64 --output=out.bin",
    "base64 -ob64.txt",
    "rg --search-zip files",
    "rg -z files",
    "rg --pre pwned files",
    "rg --pre=pwned files",
    "rg --hostname-bin pwned files",
    "rg --hostname-bin=pwned files",
    "'git status'",
    "find . -name file.txt -delete",
    "ls && rm -rf /",
    "ls > out.txt",
]
"""What the peer refuses because it may write, run a program or reach out."""

UNPROVABLE = ["(ls)", "ls || (pwd && echo hi)"]
"""What the peer refuses only because its parser does not read subshells."""


def _scratch() -> Path:
    root = Path(tempfile.mkdtemp(prefix="bench-peers-")) / "repo"
    root.mkdir()
    for name in ("file.txt", "Cargo.toml", "files", "main.py"):
        (root / name).write_text(f"{name}\n1\n2\n3\n4\n5\n6\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "x"],
        cwd=root,
        check=True,
    )
    return root


def main() -> None:
    workspace = _scratch()
    report("Codex's safe commands (unsafe ones as the harmful)", SAFE, UNSAFE, workspace)
    kept = [c for c in UNPROVABLE if judge_staged(c, workspace).allowed]
    print(f"refused by the peer for its parser only, allowed: {len(kept)} of {len(UNPROVABLE)}")


if __name__ == "__main__":
    main()
