"""A workspace with a real repository's shape, built in seconds with ``git fast-import``.

What ``bench_sandbox.py`` measures the sandbox on besides a one-file repository: some
5,000 files in nested directories, thousands of commits (each touching a few files), the
history packed (``git gc``: a pack, its index, a commit graph and packed refs) and a second
pack of later commits, hundreds of branches and tags (annotated and light, packed and
loose), a remote-tracking namespace, and a linked worktree (its git directory under
``.git/worktrees``), as a clone of a project like ansible has after some months of work.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

FILES = 5_000
COMMITS = 3_000
BRANCHES = 300
TAGS = 600


def _git(workspace: Path, *argv: str, data: bytes | None = None) -> None:
    subprocess.run(
        ["git", "-C", str(workspace), *argv], input=data, check=True, capture_output=True
    )


def _path(index: int) -> str:
    return f"lib/part{index % 37}/sub{index % 11}/module_{index}.py"


def _stream() -> bytes:
    """The fast-import stream: the first commit adds every file, each later one changes
    three; a branch every tenth commit and a tag every fifth."""
    out: list[bytes] = []
    stamp = 1_700_000_000
    for mark in range(1, COMMITS + 1):
        changed = range(FILES) if mark == 1 else (mark * 7 % FILES, mark * 13 % FILES, mark)
        lines = [
            "commit refs/heads/main",
            f"mark :{mark}",
            f"committer Dev <dev@example.test> {stamp + mark * 60} +0000",
            f"data {len(f'change {mark}')}",
            f"change {mark}",
        ]
        if mark > 1:
            lines.append(f"from :{mark - 1}")
        for index in changed:
            body = f"# module {index}, revision {mark}\nVALUE = {mark}\n"
            lines += [f"M 100644 inline {_path(index % FILES)}", f"data {len(body)}", body]
        if mark % 10 == 0 and mark // 10 <= BRANCHES:
            lines += [f"reset refs/heads/feature/{mark // 10}", f"from :{mark}"]
        if mark % 5 == 0 and mark // 5 <= TAGS:
            name = f"v{mark // 500}.{mark // 50 % 10}.{mark // 5 % 10}-{mark}"
            if mark % 2:
                lines += [f"reset refs/tags/{name}", f"from :{mark}"]
            else:
                message = f"release {name}"
                lines += [
                    f"tag {name}",
                    f"from :{mark}",
                    f"tagger Dev <dev@example.test> {stamp + mark * 60} +0000",
                    f"data {len(message)}",
                    message,
                ]
        out.append(("\n".join(lines) + "\n").encode())
    return b"".join(out)


def build(workspace: Path) -> Path:
    """A repository of that shape at ``workspace`` (checked out), and its linked worktree's
    directory beside it."""
    workspace.mkdir(parents=True)
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "config", "user.name", "Dev")
    _git(workspace, "config", "user.email", "dev@example.test")
    _git(workspace, "fast-import", "--quiet", data=_stream())
    _git(workspace, "gc", "-q", "--prune=now")
    _git(workspace, "checkout", "-q", "-f", "main")
    for number in range(1, 21):  # a second pack: later work, fetched or committed since
        (workspace / _path(number)).write_text(f"# later {number}\n")
        _git(workspace, "commit", "-q", "-am", f"later {number}")
    _git(workspace, "repack", "-q", "-d")
    for number in range(1, 41):  # loose refs beside the packed ones
        _git(workspace, "update-ref", f"refs/remotes/origin/topic-{number}", "HEAD")
    linked = workspace.parent / "linked"
    _git(workspace, "worktree", "add", "-q", str(linked), "feature/7")
    return linked
