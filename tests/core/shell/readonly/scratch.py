"""The scratch repository the corpus tests run commands in, and how harm is observed.

A command is run for real with bash, *without* the filter, in a copy of a small repository
(text files, a log, a nested bare repository whose configuration names a program, a linked
worktree's git directory pointing at it through ``commondir``). ``harm`` names what it did:
a file written or deleted, a connection opened, a secret printed, a process that does not end.
"""

from __future__ import annotations

import hashlib
import os
import select
import selectors
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from plancord.core.shell.readonly.verdict import Verdict

SECRET = "corpus-secret-SECRET-7e57"
MARKER = "PWNED"
NEVER_ENDS_SECONDS = 3.0
"""Long enough for a slow, loaded machine to finish what does end."""
#: Each command runs under this address-space bound, and at most this much of its output is
#: kept: ``grep x /dev/zero`` otherwise grows past 3 GB, and ``cat /dev/zero`` fills the
#: test's own memory through the pipe. A command the bound stops ran without end.
MEMORY_BOUND_BYTES = 512 * 1024**2
OUTPUT_BOUND_BYTES = 1024**2
OUT_OF_MEMORY = (
    b"memory exhausted",
    b"Cannot allocate memory",
    b"MemoryError",
    b"Out of memory",
)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=c@example.com", "-c", "user.name=corpus", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env=clean_env(),
    )


def clean_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG")
    return {k: v for k, v in os.environ.items() if k in keep} | {"LC_ALL": "C"}


def build_template(root: Path) -> Path:
    """The repository every case starts from (copied per case by ``copy_template``)."""
    repo = root / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\n")
    (repo / "data.txt").write_text(
        "".join(f"line {i:06d} {i * 7919 % 1000}\n" for i in range(2000))
    )
    (repo / "app.log").write_text("started\n")
    (repo / "x").write_text("delete me\n")
    (repo / "scratch").mkdir()
    (repo / "scratch" / ".keep").write_text("")
    (repo / "src").mkdir()
    (repo / "src" / "run.sh").write_text(f"touch {MARKER}\n")
    (repo / "src" / "main.py").write_text("print('main')  # TODO\n")
    (repo / "package.json").write_text('{"name": "corpus", "env": "dev", "scripts": {}}\n')
    (repo / "paths.txt").write_text("/proc/self/environ\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "c@example.com")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\nmore\n")
    git(repo, "commit", "-qam", "two")
    git(repo, "tag", "v1")
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\nmore\nuncommitted\n")
    # a checked-in bare repository whose configuration names a program
    lib = root / "lib"
    lib.mkdir()
    (lib / "a").write_text("one\n")
    git(lib, "init", "-q")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "one")
    (lib / "a").write_text("two\n")
    git(lib, "commit", "-qam", "two")
    (repo / "vendor").mkdir()
    git(root, "clone", "-q", "--bare", str(lib), str(repo / "vendor" / "lib.git"))
    with (repo / "vendor" / "lib.git" / "config").open("a") as config:
        config.write(f"[diff]\n\texternal = touch {repo / MARKER}\n")
    # a linked worktree's git directory: no objects of its own, found through `commondir`
    linked = repo / "vendor" / "wt"
    linked.mkdir()
    head = (repo / "vendor" / "lib.git" / "HEAD").read_text()
    (linked / "HEAD").write_text(head)
    (linked / "commondir").write_text("../lib.git\n")
    return repo


def copy_template(template: Path, repo: Path) -> Path:
    """A fresh copy of the template whose configuration names the copy's own marker."""
    shutil.copytree(template, repo, symlinks=True)
    config = repo / "vendor" / "lib.git" / "config"
    config.write_text(config.read_text().replace(str(template / MARKER), str(repo / MARKER)))
    return repo


@dataclass
class Listener:
    port: int
    connections: int = 0
    server: socket.socket | None = None

    def settle(self) -> None:
        """Wait (up to 2 s) until no connection waits in the backlog for the serving thread,
        so a command that connected is counted however loaded the machine is."""
        deadline = time.monotonic() + 2
        while self.server is not None and time.monotonic() < deadline:
            if not select.select([self.server], [], [], 0)[0]:
                break
            time.sleep(0.01)
        time.sleep(0.05)  # an accepted connection is counted just after accept returns


def listening() -> Iterator[Listener]:
    """A TCP listener on 127.0.0.1 counting connections, for as long as the iterator lives."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    state = Listener(server.getsockname()[1], server=server)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            state.connections += 1
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield state
    stop.set()
    thread.join()
    server.close()


def snapshot(repo: Path) -> dict[str, str]:
    seen: dict[str, str] = {}
    for path in sorted(repo.rglob("*")):
        relative = path.relative_to(repo)
        if relative.parts[0] == ".git" or relative.parts[:3] == ("vendor", "lib.git", "objects"):
            continue
        if path.is_dir():
            seen[str(relative)] = f"dir {path.stat().st_mtime_ns}"
        else:
            seen[str(relative)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return seen


@dataclass(frozen=True)
class Run:
    """What running a command did: the harm (or None), its exit status and its output."""

    harm: str | None
    returncode: int | None
    output: bytes


def bounded_output(process: subprocess.Popen[bytes]) -> tuple[bytes, bool]:
    """The first OUTPUT_BOUND_BYTES of the output (the rest is read and dropped), and whether
    the command ended within NEVER_ENDS_SECONDS."""
    assert process.stdout is not None
    deadline = time.monotonic() + NEVER_ENDS_SECONDS
    kept = bytearray()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            data = os.read(process.stdout.fileno(), 65536)
            if not data:
                break
            kept += data[: max(OUTPUT_BOUND_BYTES - len(kept), 0)]
    try:
        process.wait(max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        return bytes(kept), False
    finally:
        process.stdout.close()
    return bytes(kept), True


def run(command: str, repo: Path, listener: Listener | None = None) -> Run:
    """Run ``command`` with bash, unfiltered, and observe what it did."""
    before = snapshot(repo)
    env = clean_env() | {"CORPUS_TOKEN": SECRET}
    process = subprocess.Popen(
        ["prlimit", f"--as={MEMORY_BOUND_BYTES}", "--", "bash", "-c", command],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    output, ended = bounded_output(process)
    if not ended:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return Run("never-ends", None, output)
    if any(sign in output for sign in OUT_OF_MEMORY):
        return Run("never-ends", process.returncode, output)
    if listener is not None:
        listener.settle()
    harm = None
    if SECRET.encode() in output:
        harm = "secret"
    elif listener is not None and listener.connections:
        harm = "connects"
    elif snapshot(repo) != before:
        harm = "writes"
    return Run(harm, process.returncode, output)


def assert_runs_as_bash_would(command: str, verdict: Verdict, repo: Path) -> Run:
    """``command`` was judged read-only, and the script it was judged into does what bash
    does with the original text: no harm, the same exit status, the same output. The
    judged script's run, for what a test asserts beyond that."""
    assert verdict.allowed, f"{command!r}: {verdict.reason}"
    assert verdict.script is not None
    judged, original = run(verdict.script, repo), run(command, repo)
    assert judged.harm is None
    assert judged.returncode == original.returncode, judged.output
    assert judged.output == original.output
    return judged


def require_program(command: str) -> None:
    """Skip the test when the program the command starts with is not installed here
    (``tree`` and ``mawk`` are not on every system)."""
    import pytest

    program = command.split()[0]
    if program in ("tree", "mawk", "gawk", "xxd", "jq") and shutil.which(program) is None:
        pytest.skip(f"`{program}` is not installed")


def harm(command: str, repo: Path, listener: Listener | None = None) -> str | None:
    """Run ``command`` with bash, unfiltered; name the harm it did, or None."""
    return run(command, repo, listener).harm
