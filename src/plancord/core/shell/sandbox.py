"""Run the agent's shell commands, and in plan mode run them inside a kernel read-only jail.

Why this exists: the read-only classifier (``readonly.py``) decides which commands plan mode
may run, but a classifier can be wrong. Commands it allows still run here under Landlock, so
a mistake in the classifier cannot write a file or open a TCP connection. Every shell run,
in any phase, also goes through :func:`run_shell` for the same lifecycle: an asyncio
subprocess in the workspace, in its own process group, stdin from ``/dev/null``, a timeout
that kills the whole group, and output capped while it is read.

What the sandbox enforces, per Landlock ABI (the highest the kernel offers, up to 7):

* ABI 1+: read and execute everywhere; no other filesystem right anywhere (no create,
  remove, rename, link, mkdir, mknod, symlink, write), except writing to ``/dev/null``.
* ABI 2+: ``REFER`` is handled too, so no rename or link across directories.
* ABI 3+: no truncation (``truncate``, ``O_TRUNC``) except of ``/dev/null``.
* ABI 4+: no TCP ``bind`` and no TCP ``connect``, on any port.
* ABI 5+: no device ``ioctl`` on devices opened in the sandbox (``/dev/null`` excepted).
* ABI 6+: scoped: no connecting to abstract unix sockets and no signals to processes
  outside the sandbox (the bot, other commands).
* ABI 7 adds only audit-logging flags; they are left at the kernel's default, which audits
  denials by the trampoline itself (there should be none) but not by the commands it
  executes, whose denials are the expected outcome of plan mode and would flood the log.

``PR_SET_NO_NEW_PRIVS`` is set first, so setuid programs cannot regain rights. Files opened
before the jail stay usable: the child inherits only stdin (``/dev/null``) and the output
pipe, since the subprocess closes every other descriptor. The new session has no
controlling terminal, so ``/dev/tty`` cannot be opened.

What Landlock (ABI 7) does not cover, so the sandbox does not either: metadata changes
(``chmod``, ``chown``, ``touch`` of an existing file's times, extended attributes), UDP and
other non-TCP sockets, connecting to unix sockets that have a path, and anything the process
may do by its capabilities alone when the bot runs as root. The classifier is the first
line against those.

How: the jail is applied by a trampoline, not in ``preexec_fn``. The subprocess runs
``python -I -S <this file> -- CMD...``; the trampoline restricts itself (Landlock domains
are inherited and cannot be lifted) and ``execvp``s the command, so the bot process stays
unrestricted and nothing runs between ``fork`` and ``exec`` in a process that has threads
(``preexec_fn`` there can deadlock on locks other threads held at fork time, and asyncio
plus the database worker thread make the bot multi-threaded). The trampoline part of this
file needs only ``os``, ``signal``, ``sys`` and ``ctypes`` and leaves (by ``exec``) before the
imports that only the bot needs, asyncio above all: that keeps the trampoline's start-up under
30 ms instead of about 100 (``benchmarks/bench_sandbox.py`` measures it).

Why ctypes rather than the ``landlock`` binding on PyPI: that binding is a development
release (1.0.0.dev5) and would be a dependency of the pure core, which may import only the
stdlib; its ruleset carries filesystem rights only (up to ``REFER``, ABI 2), so it cannot
deny truncation, device ioctls or TCP, nor scope sockets and signals, all of which this
sandbox handles whenever the kernel's ABI has them. Three syscalls, two structures and a
``prctl`` are little enough to own. The syscalls are 444, 445 and 446 on every architecture
that uses the unified syscall table (x86_64, aarch64, arm, i386, riscv, powerpc, s390x,
loongarch); alpha and ia64 are offset; MIPS is reported as unavailable.

Environment of every run: only ``PATH`` (``os.defpath`` when unset), ``HOME`` and ``LANG``
are taken from the bot's environment, so tokens and API keys never reach a command. Added:
``TERM=dumb``, ``PAGER=cat``, ``GIT_PAGER=cat`` (no pager waiting on a terminal),
``GIT_TERMINAL_PROMPT=0`` (git fails instead of asking for credentials) and
``GIT_OPTIONAL_LOCKS=0`` (``git status`` does not rewrite the index, which the sandbox would
refuse and which would race with other git commands), and ``GIT_CONFIG_COUNT`` overrides
that switch off the programs a repository's config could make git run (fsmonitor, pager,
signature checks, ext:: transports). The caller's ``env`` is applied last and may
override any of these.
"""

# ruff: noqa: E402

from __future__ import annotations

import ctypes
import os
import signal
import sys

_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_ABI_1 = (1 << 13) - 1
_FS_REFER = 1 << 13
_FS_TRUNCATE = 1 << 14
_FS_IOCTL_DEV = 1 << 15
_NET_BIND_TCP = 1 << 0
_NET_CONNECT_TCP = 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
_SCOPE_SIGNAL = 1 << 1

_RIGHTS_ADDED_BY_ABI: dict[int, tuple[int, int, int]] = {
    1: (_FS_ABI_1, 0, 0),
    2: (_FS_REFER, 0, 0),
    3: (_FS_TRUNCATE, 0, 0),
    4: (0, _NET_BIND_TCP | _NET_CONNECT_TCP, 0),
    5: (_FS_IOCTL_DEV, 0, 0),
    6: (0, 0, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL),
}

_READ_EVERYWHERE = _FS_READ_FILE | _FS_READ_DIR | _FS_EXECUTE
_DEV_NULL_RIGHTS = _FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV

_EXIT_CANNOT_RUN = 126
_EXIT_NOT_FOUND = 127


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _syscall_numbers() -> tuple[int, int, int] | None:
    """Numbers of landlock_create_ruleset, landlock_add_rule, landlock_restrict_self."""
    if sys.platform != "linux":
        return None
    machine = os.uname().machine
    if machine.startswith("mips"):
        return None
    base = {"alpha": 554, "ia64": 1468}.get(machine, 444)
    return base, base + 1, base + 2


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock cannot be used.

    0 covers a kernel built without Landlock (``ENOSYS``), Landlock left out of the
    ``lsm=`` boot list (``EOPNOTSUPP``), a non-Linux system and an architecture whose
    syscall numbers this module does not know.
    """
    numbers = _syscall_numbers()
    libc = _libc()
    if numbers is None or libc is None:
        return 0
    version = int(
        libc.syscall(
            ctypes.c_long(numbers[0]),
            None,
            ctypes.c_long(0),
            ctypes.c_long(_CREATE_RULESET_VERSION),
        )
    )
    return max(version, 0)


def _handled_rights(abi: int) -> tuple[int, int, int]:
    """Filesystem, network and scope rights the ruleset handles (denies) at this ABI."""
    fs = net = scoped = 0
    for level, (fs_added, net_added, scoped_added) in _RIGHTS_ADDED_BY_ABI.items():
        if level <= abi:
            fs |= fs_added
            net |= net_added
            scoped |= scoped_added
    return fs, net, scoped


def _errno_error(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def _restrict_self(abi: int) -> None:
    """Jail this process and its future children: read anywhere, write only /dev/null.

    Raises OSError when any step fails; the caller must then not run the command.
    """
    numbers = _syscall_numbers()
    libc = _libc()
    if numbers is None or libc is None or abi < 1:
        raise OSError("Landlock is not available")
    create_ruleset, add_rule, restrict_self = numbers
    fs, net, scoped = _handled_rights(abi)
    attr_size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    attr = _RulesetAttr(fs, net, scoped)

    no_new_privs = libc.prctl(
        ctypes.c_int(_PR_SET_NO_NEW_PRIVS),
        ctypes.c_ulong(1),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
    if int(no_new_privs) != 0:
        raise _errno_error("prctl(PR_SET_NO_NEW_PRIVS)")

    ruleset_fd = int(
        libc.syscall(
            ctypes.c_long(create_ruleset),
            ctypes.byref(attr),
            ctypes.c_long(attr_size),
            ctypes.c_long(0),
        )
    )
    if ruleset_fd < 0:
        raise _errno_error("landlock_create_ruleset")
    try:
        for path, rights in (("/", _READ_EVERYWHERE), ("/dev/null", _DEV_NULL_RIGHTS)):
            parent_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneathAttr(rights & fs, parent_fd)
                added = libc.syscall(
                    ctypes.c_long(add_rule),
                    ctypes.c_long(ruleset_fd),
                    ctypes.c_long(_RULE_PATH_BENEATH),
                    ctypes.byref(rule),
                    ctypes.c_long(0),
                )
                if int(added) != 0:
                    raise _errno_error(f"landlock_add_rule({path})")
            finally:
                os.close(parent_fd)
        restricted = libc.syscall(
            ctypes.c_long(restrict_self), ctypes.c_long(ruleset_fd), ctypes.c_long(0)
        )
        if int(restricted) != 0:
            raise _errno_error("landlock_restrict_self")
    finally:
        os.close(ruleset_fd)


def _exec_sandboxed(argv: list[str]) -> NoReturn:
    """Trampoline: jail this process, then replace it with ``argv``; never runs it unjailed.

    Python starts with SIGPIPE and SIGXFSZ ignored, and ignored signals survive ``exec``;
    they are reset so that ``yes | head`` ends the way it does in a terminal.
    """
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("plancord sandbox: no command given", file=sys.stderr)
        sys.exit(2)
    try:
        _restrict_self(landlock_abi())
    except OSError as exc:
        print(f"plancord sandbox: could not apply Landlock: {exc}", file=sys.stderr)
        sys.exit(_EXIT_CANNOT_RUN)
    for ignored_by_python in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(ignored_by_python, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)  # noqa: S606 - running argv without a shell is the point
    except FileNotFoundError:
        print(f"plancord sandbox: {argv[0]}: command not found", file=sys.stderr)
        sys.exit(_EXIT_NOT_FOUND)
    except OSError as exc:
        print(f"plancord sandbox: {argv[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(_EXIT_CANNOT_RUN)


if __name__ == "__main__":
    _exec_sandboxed(sys.argv[1:])

# Everything below serves the bot process; the trampoline has exec'd before reaching it.

import asyncio
import codecs
import contextlib
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

_TRAMPOLINE = os.path.abspath(__file__)
_KEPT_ENV = ("PATH", "HOME", "LANG")
#: Repository config can name programs that even read-only git commands run; these settings
#: (passed through git's GIT_CONFIG_COUNT mechanism, which beats every config file) turn
#: them off for every command, whatever the workspace's ``.git/config`` says.
GIT_CONFIG_OVERRIDES = (
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
)
_FIXED_ENV = {
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_CONFIG_COUNT": str(len(GIT_CONFIG_OVERRIDES)),
    **{f"GIT_CONFIG_KEY_{i}": key for i, (key, _) in enumerate(GIT_CONFIG_OVERRIDES)},
    **{f"GIT_CONFIG_VALUE_{i}": value for i, (_, value) in enumerate(GIT_CONFIG_OVERRIDES)},
}
_REAP_GRACE = 2.0

_UNAVAILABLE = (
    "the plan-mode shell needs the Landlock sandbox, which this kernel does not offer "
    "(it needs Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK=y and 'landlock' in "
    "the lsm= boot parameter); enable Landlock, or set `shell_sandbox: off` in the plan-mode "
    "settings to run plan-mode commands without it"
)


class SandboxUnavailable(Exception):
    """Landlock cannot be used on this machine; the message tells the operator what to do."""


@dataclass(frozen=True, slots=True)
class ShellResult:
    """What one shell run produced.

    ``exit_code`` is None when the timeout killed the command, 128+N when signal N killed
    it. ``output`` is stdout and stderr interleaved, decoded as UTF-8 (bad bytes replaced);
    when ``truncated`` it holds the first ``max_output`` bytes and ends with a note saying so.
    """

    exit_code: int | None
    output: str
    timed_out: bool
    truncated: bool
    sandboxed: bool


def _shell_environment(extra: Mapping[str, str] | None) -> dict[str, str]:
    environment = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
    environment.setdefault("PATH", os.defpath)
    environment.update(_FIXED_ENV)
    if extra:
        environment.update(extra)
    return environment


def _trampoline_argv(argv: Sequence[str]) -> list[str]:
    return [sys.executable, "-I", "-S", _TRAMPOLINE, "--", *argv]


def _exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class _OutputCapture(asyncio.SubprocessProtocol):
    """Keeps the first ``limit`` bytes of the output, counts and drops the rest."""

    def __init__(self, limit: int) -> None:
        loop = asyncio.get_running_loop()
        self.limit = limit
        self.kept = bytearray()
        self.total = 0
        self.exited: asyncio.Future[None] = loop.create_future()
        self.output_closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | bytearray) -> None:
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.total += len(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.output_closed.done():
            self.output_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def text(self) -> tuple[str, bool]:
        """The decoded output (with the truncation note when cut) and whether it was cut."""
        truncated = self.total > self.limit
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = decoder.decode(bytes(self.kept), final=not truncated)
        if truncated:
            separator = "" if text.endswith("\n") or not text else "\n"
            text += (
                f"{separator}[output truncated: showing the first {self.limit:,} of "
                f"{self.total:,} bytes]"
            )
        return text, truncated


async def run_shell(
    command: str,
    workspace: Path,
    *,
    sandbox: bool,
    timeout: float = 60.0,  # noqa: ASYNC109 - the shell's own deadline, part of the interface
    max_output: int = 100_000,
    env: Mapping[str, str] | None = None,
) -> ShellResult:
    """Run ``bash -c command`` (``/bin/sh`` without bash) in ``workspace``.

    The command runs in its own process group with stdin from ``/dev/null`` and the
    sanitised environment described in the module docstring. After ``timeout`` seconds the
    whole group is killed and the result says ``timed_out``; when the shell exits first,
    whatever it left running in its group is killed too, so no process outlives the run.
    Output past ``max_output`` bytes is read and dropped, never held in memory.

    With ``sandbox`` the command runs under Landlock; SandboxUnavailable is raised, before
    anything is started, when the kernel has no Landlock. OSError is raised when the
    workspace or the shell cannot be used.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, not {timeout}")
    if max_output < 0:
        raise ValueError(f"max_output must not be negative, not {max_output}")
    if sandbox and landlock_abi() == 0:
        raise SandboxUnavailable(_UNAVAILABLE)

    environment = _shell_environment(env)
    shell = shutil.which("bash", path=environment["PATH"]) or "/bin/sh"
    argv = [shell, "-c", command]
    if sandbox:
        argv = _trampoline_argv(argv)

    loop = asyncio.get_running_loop()
    capture = _OutputCapture(max_output)
    transport, _ = await loop.subprocess_exec(
        lambda: capture,
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=workspace,
        env=environment,
        start_new_session=True,
    )
    try:
        finished, _ = await asyncio.wait({capture.exited}, timeout=timeout)
    finally:
        _kill_group(transport.get_pid())
        await asyncio.wait({capture.exited}, timeout=_REAP_GRACE)
        await asyncio.wait({capture.output_closed}, timeout=_REAP_GRACE)
        transport.close()

    timed_out = not finished
    returncode = transport.get_returncode()
    exit_code = None if timed_out or returncode is None else _exit_status(returncode)
    output, truncated = capture.text()
    return ShellResult(
        exit_code=exit_code,
        output=output,
        timed_out=timed_out,
        truncated=truncated,
        sandboxed=sandbox,
    )


def sandbox_run(workspace: Path, argv: Sequence[str]) -> int:
    """Run ``argv`` in ``workspace`` under the plan-mode sandbox, with this process's stdio.

    For ``plancord sandbox-run``: no shell, no classifier, the caller's environment. Returns
    the command's exit status (128+N when signal N killed it), or 2 after a one-line error
    on stderr when the workspace is missing or Landlock is unavailable.
    """
    if not argv:
        print("plancord sandbox-run: no command given", file=sys.stderr)
        return 2
    if not workspace.is_dir():
        print(f"plancord sandbox-run: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    if landlock_abi() == 0:
        print(f"plancord sandbox-run: {_UNAVAILABLE}", file=sys.stderr)
        return 2
    completed = subprocess.run(_trampoline_argv(argv), cwd=workspace, check=False)
    return _exit_status(completed.returncode)
