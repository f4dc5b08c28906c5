"""One sandboxed process's life: spawned, its output read as it comes, waited for, killed.

Why this exists: the runner (``sandbox.runner``) decides what a run is (its layer, argv and
environment, a :class:`Spawn`); this runs it in the calling worker thread, never on the
event loop: stdin from ``/dev/null``, a new session, the first ``max_output`` bytes of
each stream kept and the rest counted and dropped, and at the deadline, on a cancel, or
once the command ends, the whole sandbox killed (bubblewrap's pid namespace dies with it;
the fallback's supervisor kills what was reparented to it). Nothing outlives the call.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from plancord.core.output_bound import OutputBound
from plancord.core.sandbox_policy import Layer

_POLL_SECONDS = 0.05
_READ_BLOCK = 64 * 1024
_DRAIN_GRACE_SECONDS = 1.0
STOP_GRACE_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """What one sandboxed run produced.

    ``exit_code`` is None when the timeout (``timed_out``) or a cancellation
    (``cancelled``: the awaiting task was cancelled, a Stop) killed the command, 128+N
    when signal N killed it. ``stdout`` holds stderr too when the run merged them. Each text
    is decoded as UTF-8 (bad bytes replaced); a stream past ``max_output`` bytes keeps its
    first bytes, ends with a note saying so, and sets ``truncated``.
    """

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    layer: Layer
    read_only: bool
    git_read_only: tuple[str, ...] = ()
    """The git directories the run saw read-only (empty when the whole workspace was)."""
    cancelled: bool = False
    """The run was stopped because its caller was cancelled, not because time ran out."""

    @property
    def output(self) -> str:
        return self.stdout


@dataclass(slots=True)
class _Sink:
    """A stream copied into an open file of the host's (up to ``limit`` bytes) instead of
    kept: the same ``add`` and ``text`` as :class:`OutputBound`, with no text to give."""

    limit: int
    fd: int
    total: int = 0

    def add(self, data: bytes) -> None:
        view = memoryview(data)[: max(0, self.limit - self.total)]
        while view:
            view = view[os.write(self.fd, view) :]
        self.total += len(data)

    def text(self) -> tuple[str, bool]:
        return "", self.total > self.limit


@dataclass(frozen=True, slots=True)
class Spawn:
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    layer: Layer
    private_tmp: str | None
    view_dir: str | None = None
    git_read_only: tuple[str, ...] = ()
    pass_fds: tuple[int, ...] = ()
    """Descriptors the sandbox is built from (a Push's remote), closed with the run."""

    def clean_up(self) -> None:
        for directory in (self.private_tmp, self.view_dir):
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _stop(process: subprocess.Popen[bytes], layer: Layer) -> None:
    """Kill the run and everything it started; never raises."""
    if layer is Layer.LANDLOCK and process.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(STOP_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_blocking(
    spawn: Spawn,
    *,
    timeout: float,
    max_output: int,
    merge_stderr: bool,
    cancel: threading.Event,
    read_only: bool,
    stdout_to: int | None = None,
) -> ProcessResult:
    deadline = time.monotonic() + timeout
    out: OutputBound | _Sink = (
        OutputBound(max_output) if stdout_to is None else _Sink(max_output, stdout_to)
    )
    err = OutputBound(max_output)
    process = subprocess.Popen(
        spawn.argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        cwd=spawn.cwd,
        env=spawn.env,
        start_new_session=True,
        pass_fds=spawn.pass_fds,
    )
    timed_out = cancelled = False
    with selectors.DefaultSelector() as selector:
        for stream, capture in ((process.stdout, out), (process.stderr, err)):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                selector.register(stream, selectors.EVENT_READ, capture)
        exited_at: float | None = None
        try:
            while True:
                now = time.monotonic()
                if exited_at is None:
                    if process.poll() is not None:
                        _stop(process, spawn.layer)
                        exited_at = now
                    elif cancel.is_set():
                        cancelled = True
                        break
                    elif now >= deadline:
                        timed_out = True
                        break
                if not selector.get_map():
                    if exited_at is not None:
                        break
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.wait(min(_POLL_SECONDS, max(deadline - now, 0.001)))
                    continue
                if exited_at is not None and now - exited_at > _DRAIN_GRACE_SECONDS:
                    break
                for key, _ in selector.select(_POLL_SECONDS):
                    try:
                        data = os.read(key.fd, _READ_BLOCK)
                    except BlockingIOError:
                        continue
                    if data:
                        key.data.add(data)
                    else:
                        selector.unregister(key.fileobj)
        finally:
            _stop(process, spawn.layer)
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()
            process.wait()
            spawn.clean_up()
    stdout, cut_out = out.text()
    stderr, cut_err = err.text()
    return ProcessResult(
        exit_code=None if timed_out or cancelled else exit_status(process.returncode),
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        cancelled=cancelled,
        truncated=cut_out or cut_err,
        layer=spawn.layer,
        read_only=read_only,
        git_read_only=spawn.git_read_only,
    )
