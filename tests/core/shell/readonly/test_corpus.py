"""The attack corpus: harmful commands by family, each shown doing harm, each refused.

Every case is first run for real with bash in a scratch repository, *without* the filter,
and must do the harm its family names (a file written or deleted, a program run, a
connection opened, a secret printed, a process that does not end). Then the filter must
refuse it. A case that does no harm fails the test, so the corpus cannot rot into
commands that prove nothing.
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

import pytest

from plancord.core.shell.readonly import classify

SECRET = "corpus-secret-SECRET-7e57"
MARKER = "PWNED"
NEVER_ENDS_SECONDS = 1.5
#: Each command runs under this address-space bound, and at most this much of its output is
#: kept: ``grep x /dev/zero`` otherwise grows past 3 GB, and ``cat /dev/zero`` fills the
#: test's own memory through the pipe. A command the bound stops ran without end.
MEMORY_BOUND_BYTES = 512 * 1024**2
OUTPUT_BOUND_BYTES = 1024**2
OUT_OF_MEMORY = (b"memory exhausted", b"Cannot allocate memory", b"MemoryError")

# -- the families -------------------------------------------------------------------------
# harm: "writes" (a file created, changed or deleted, or a directory written to),
# "connects" (a TCP connection to {port}), "secret" (SECRET in the output),
# "never-ends" (still running after NEVER_ENDS_SECONDS).

FAMILIES: dict[str, list[tuple[str, str]]] = {
    "a comment bash does not see": [
        ("echo $(true)#${y:-$(touch f)}", "writes"),
        ("echo a#$(touch f)", "writes"),
        ("ls x#`touch f`", "writes"),
        ("cat notes.txt # a comment\ntouch f", "writes"),
        ("echo ok\\#; touch f", "writes"),
        ('echo "#"$(touch f)', "writes"),
    ],
    "field splitting": [
        ("sed s/a/b/ notes.txt$IFS-i", "writes"),
        ("sort notes.txt$IFS-oout", "writes"),
        ("git diff$IFS--output=f", "writes"),
        ("sed s/a/b/ notes.txt ${IFS}-i", "writes"),
        ("x=-i; sed s/a/b/ $x notes.txt", "writes"),
        ("set -- -i; sed s/a/b/ $@ notes.txt", "writes"),
    ],
    "options that take a value, or an optional one": [
        ("git diff -U --output=f HEAD", "writes"),
        ("git log -1 --output=f", "writes"),
        ("sort --out=f notes.txt", "writes"),
        ("sed --in-pl s/a/b/ notes.txt", "writes"),
        ("rg --pre=sh x .", "writes"),
        ("sort -nof notes.txt", "writes"),
        ("git log -1 -p --output f", "writes"),
    ],
    "brace expansion": [
        ("find -D {tree,.,-delete}", "writes"),
        ("sort notes.txt {-o,out}", "writes"),
        ("sed {-i,s/a/b/} notes.txt", "writes"),
        ("git log -1 --{output=f,stat}", "writes"),
        ("find . {-name,x,-delete}", "writes"),
        ("tail {-f,notes.txt}", "never-ends"),
    ],
    "operand order": [
        ("sed s/a/b/ notes.txt -i", "writes"),
        ("sort notes.txt -o out", "writes"),
        ("uniq notes.txt out", "writes"),
        ("xxd notes.txt out", "writes"),
        ("sort notes.txt$IFS-oout", "writes"),
        ("tail notes.txt -f", "never-ends"),
    ],
    "network pseudo-devices": [
        ("cat < /dev/tcp/127.0.0.1/{port}", "connects"),
        ("head -c1 < /dev/tcp/127.0.0.1/{port}", "connects"),
        ("echo hi > /dev/tcp/127.0.0.1/{port}", "connects"),
        ("cat notes.txt >& /dev/tcp/127.0.0.1/{port}", "connects"),
        ("wc -c 0</dev/tcp/localhost/{port}", "connects"),
        ("cat notes.txt < /dev/$(printf tcp)/127.0.0.1/{port} >&0", "connects"),
    ],
    "gawk's network files": [
        ("""gawk 'BEGIN{{getline l < "/inet/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{getline l < "/\\151net/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{print "x" > "/inet/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{"/inet/tcp/0/127.0.0.1/{port}" |& getline l}}'""", "connects"),
        ("""gawk 'BEGIN{{s="/inet/tcp/0/127.0.0.1/{port}"; printf "" > s}}'""", "connects"),
        ("""awk 'BEGIN{{f="/inet/tcp/0/127.0.0.1/{port}"; getline x < f}}'""", "connects"),
    ],
    "an embedded repository": [
        ("git -C vendor/lib.git diff HEAD~1 HEAD", "writes"),
        ("git --git-dir=vendor/lib.git diff HEAD~1 HEAD", "writes"),
        ("cd vendor/lib.git && git diff HEAD~1 HEAD", "writes"),
        ("git --git-dir vendor/lib.git log -p --ext-diff -1", "writes"),
        ("GIT_DIR=vendor/lib.git git diff HEAD~1 HEAD", "writes"),
        ("cd vendor/lib.git && git show --ext-diff HEAD", "writes"),
    ],
    "temporary files": [
        ("sort -T scratch -S 2K data.txt", "writes"),
        ("sort --temporary-directory=scratch -S 2K data.txt", "writes"),
        ("sort -S 2K -Tscratch data.txt", "writes"),
        ("sort --tem=scratch -S 2K data.txt", "writes"),
        ("sort -S 2K data.txt -T scratch", "writes"),
        ("TMPDIR=scratch sort -S 2K data.txt", "writes"),
    ],
    "secrets": [
        ("strings /proc/$$/environ", "secret"),
        ("cat /proc/self/environ", "secret"),
        ("""awk 'BEGIN{print ENVIRON["CORPUS_TOKEN"]}'""", "secret"),
        ("echo $CORPUS_TOKEN", "secret"),
        ("jq -n env", "secret"),
        ("jq -n '$ENV.CORPUS_TOKEN'", "secret"),
        ("grep -a SECRET /proc/self/environ", "secret"),
        ("printenv CORPUS_TOKEN", "secret"),
    ],
    "never-ending reads": [
        ("seq inf", "never-ends"),
        ("tail -f app.log", "never-ends"),
        ("cat /dev/zero", "never-ends"),
        ("tail -F app.log", "never-ends"),
        ("tail --follow=name app.log", "never-ends"),
        ("wc -c < /dev/zero", "never-ends"),
        ("seq 1e100", "never-ends"),
        ("grep x /dev/zero", "never-ends"),
    ],
}

CASES = [
    pytest.param(family, command, harm, id=f"{family[:12]}-{index}")
    for family, cases in FAMILIES.items()
    for index, (command, harm) in enumerate(cases)
]


# -- the scratch repository ---------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=c@example.com", "-c", "user.name=corpus", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env=_clean_env(),
    )


def _clean_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG")
    return {k: v for k, v in os.environ.items() if k in keep} | {"LC_ALL": "C"}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    repo = root / "repo"
    repo.mkdir()
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\n")
    (repo / "data.txt").write_text(
        "".join(f"line {i:06d} {i * 7919 % 1000}\n" for i in range(20000))
    )
    (repo / "app.log").write_text("started\n")
    (repo / "x").write_text("delete me\n")
    (repo / "scratch").mkdir()
    (repo / "scratch" / ".keep").write_text("")
    (repo / "src").mkdir()
    (repo / "src" / "run.sh").write_text(f"touch {MARKER}\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\nmore\n")
    _git(repo, "commit", "-qam", "two")
    (repo / "notes.txt").write_text("alpha\nbanana\nx marks\nmore\nuncommitted\n")
    # a checked-in bare repository whose configuration names a program
    lib = root / "lib"
    lib.mkdir()
    (lib / "a").write_text("one\n")
    _git(lib, "init", "-q")
    _git(lib, "add", ".")
    _git(lib, "commit", "-qm", "one")
    (lib / "a").write_text("two\n")
    _git(lib, "commit", "-qam", "two")
    (repo / "vendor").mkdir()
    _git(root, "clone", "-q", "--bare", str(lib), str(repo / "vendor" / "lib.git"))
    marker = repo / MARKER
    with (repo / "vendor" / "lib.git" / "config").open("a") as config:
        config.write(f"[diff]\n\texternal = touch {marker}\n")
    return repo


@pytest.fixture
def scratch(template: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(template, repo, symlinks=True)
    marker = repo / MARKER
    config = repo / "vendor" / "lib.git" / "config"
    config.write_text(config.read_text().replace(str(template / MARKER), str(marker)))
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
                return
            time.sleep(0.01)


@pytest.fixture
def listener() -> Iterator[Listener]:
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


def _snapshot(repo: Path) -> dict[str, str]:
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


def _bounded_output(process: subprocess.Popen[bytes]) -> tuple[bytes, bool]:
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


def _harm(command: str, repo: Path, listener: Listener) -> str | None:
    """Run ``command`` with bash, unfiltered; name the harm it did, or None."""
    before = _snapshot(repo)
    env = _clean_env() | {"CORPUS_TOKEN": SECRET}
    process = subprocess.Popen(
        ["prlimit", f"--as={MEMORY_BOUND_BYTES}", "--", "bash", "-c", command],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    output, ended = _bounded_output(process)
    if not ended:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return "never-ends"
    if any(sign in output for sign in OUT_OF_MEMORY):
        return "never-ends"
    if SECRET.encode() in output:
        return "secret"
    listener.settle()
    if listener.connections:
        return "connects"
    if _snapshot(repo) != before:
        return "writes"
    return None


@pytest.mark.parametrize(("family", "command", "harm"), CASES)
def test_each_corpus_command_does_harm_unfiltered_and_is_refused(
    family: str, command: str, harm: str, scratch: Path, listener: Listener
) -> None:
    command = command.replace("{port}", str(listener.port)).replace("{{", "{").replace("}}", "}")
    verdict = classify(command, scratch)
    assert _harm(command, scratch, listener) == harm, f"{family}: {command!r} did no {harm}"
    assert not verdict.allowed, f"{family}: {command!r} was allowed: {verdict.reason}"
    assert verdict.script is None
    assert verdict.reason


def test_every_family_has_five_variants() -> None:
    assert len(FAMILIES) >= 11
    assert all(len(cases) >= 5 for cases in FAMILIES.values())
