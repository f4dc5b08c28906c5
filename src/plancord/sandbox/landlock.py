"""Landlock, applied by a trampoline: the inner wall while planning, and the fallback sandbox.

Why this exists: Landlock lets an unprivileged process take rights away from itself and its
future children, and nobody can give them back. The runner uses it in two ways:

* ``readonly`` mode, the **inner wall while planning**, inside bubblewrap: read and execute
  everywhere the process can see, write nothing but ``/dev/null``. A classifier mistake, or a
  program a repository names, still cannot write a file or open a TCP connection.
* ``confine`` mode, the **fallback** where bubblewrap cannot start (no user namespaces, as
  under Docker's default seccomp profile): reads and executes only beneath the ``--read``
  paths (the system's programs and the agent's workspace), writes only beneath the
  ``--write`` paths (the workspace while executing, the run's private temporary directory)
  and ``/dev/null``, TCP off unless ``--net``. The trampoline stays as a parent that is also
  a *child subreaper*: whatever the command leaves behind, double forks and ``setsid``
  daemons included, is reparented to it and killed when the command ends or the runner
  stops the run.

What each Landlock ABI adds (the highest the kernel offers is used, up to 7):

* ABI 1+: filesystem rights (read, write, execute, create, remove, rename, link, mkdir,
  mknod, symlink) handled, so denied outside the rules.
* ABI 2+: ``REFER`` (rename or link across directories). ABI 3+: truncation.
* ABI 4+: TCP ``bind`` and ``connect``. ABI 5+: device ``ioctl``.
* ABI 6+: scoped: no connecting to abstract unix sockets and no signals to processes
  outside the sandbox (the bot, other commands).

What Landlock does not stop: UDP and other non-TCP sockets and unix sockets that have a
path; in ``confine`` mode the ``socket_filter`` seccomp filter refuses every unix socket,
and without ``--net`` every non-stream inet socket too. Nor, so the fallback does not
either: metadata changes (``chmod``, ``touch`` of times), reading the *names* in
directories it cannot read (``stat`` of a known path), and anything a process may do by its
capabilities when the bot runs as root. bubblewrap's namespaces stop those; this is why it
comes first.

``PR_SET_NO_NEW_PRIVS`` is set first, so setuid programs cannot regain rights. The
trampoline needs only ``os``, ``signal``, ``sys`` and ``ctypes``, and is run as
``python -I -S landlock.py MODE [--read P]... [--write P]... [--net] -- CMD...``: the bot
process stays unrestricted, and nothing runs between ``fork`` and ``exec`` in a process
that has threads. Why ctypes rather than a binding from PyPI: three syscalls, two
structures and a ``prctl`` are little enough to own, and the binding on PyPI handles
filesystem rights only. The syscalls are 444, 445 and 446 on every architecture that uses
the unified syscall table; alpha and ia64 are offset; MIPS is reported as unavailable.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36

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

_READ_RIGHTS = _FS_READ_FILE | _FS_READ_DIR | _FS_EXECUTE
_DEV_NULL_RIGHTS = _FS_READ_FILE | _FS_WRITE_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_ALL_FS_RIGHTS = _FS_ABI_1 | _FS_REFER | _FS_TRUNCATE | _FS_IOCTL_DEV

EXIT_CANNOT_RUN = 126
EXIT_NOT_FOUND = 127
MODES = ("readonly", "confine")


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


def _prctl(libc: ctypes.CDLL, option: int, what: str) -> None:
    done = libc.prctl(
        ctypes.c_int(option),
        ctypes.c_ulong(1),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
    if int(done) != 0:
        raise _errno_error(what)


def restrict_self(
    abi: int,
    rules: list[tuple[str, int]],
    *,
    allow_tcp: bool = False,
) -> None:
    """Jail this process and its future children to ``rules`` (path, rights beneath it).

    Paths that do not exist are skipped. Raises OSError when any other step fails; the
    caller must then not run the command.
    """
    numbers = _syscall_numbers()
    libc = _libc()
    if numbers is None or libc is None or abi < 1:
        raise OSError("Landlock is not available")
    create_ruleset, add_rule, restrict = numbers
    fs, net, scoped = _handled_rights(abi)
    if allow_tcp:
        net = 0
    attr_size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    attr = _RulesetAttr(fs, net, scoped)
    _prctl(libc, _PR_SET_NO_NEW_PRIVS, "prctl(PR_SET_NO_NEW_PRIVS)")
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
        for path, rights in rules:
            try:
                parent_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                allowed = rights & fs
                if not os.path.isdir(path):
                    allowed &= _DEV_NULL_RIGHTS | _FS_EXECUTE
                rule = _PathBeneathAttr(allowed, parent_fd)
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
            ctypes.c_long(restrict), ctypes.c_long(ruleset_fd), ctypes.c_long(0)
        )
        if int(restricted) != 0:
            raise _errno_error("landlock_restrict_self")
    finally:
        os.close(ruleset_fd)


def readonly_rules() -> list[tuple[str, int]]:
    """The inner wall: read and execute everywhere, write only ``/dev/null``."""
    return [("/", _READ_RIGHTS), ("/dev/null", _DEV_NULL_RIGHTS)]


def confine_rules(read: list[str], write: list[str]) -> list[tuple[str, int]]:
    """The fallback: read beneath ``read``, everything beneath ``write``, and ``/dev/null``."""
    rules = [(path, _READ_RIGHTS) for path in read]
    rules += [(path, _ALL_FS_RIGHTS) for path in write]
    rules.append(("/dev/null", _DEV_NULL_RIGHTS))
    return rules


def _parse(argv: list[str]) -> tuple[str, list[str], list[str], bool, list[str]]:
    """``MODE [--read P]... [--write P]... [--net] -- CMD...``; raises ValueError."""
    if not argv or argv[0] not in MODES:
        raise ValueError(f"the first argument is the mode: {' or '.join(MODES)}")
    mode, rest = argv[0], argv[1:]
    read: list[str] = []
    write: list[str] = []
    net = False
    while rest and rest[0] != "--":
        option = rest.pop(0)
        if option == "--net":
            net = True
        elif option in ("--read", "--write") and rest:
            (read if option == "--read" else write).append(rest.pop(0))
        else:
            raise ValueError(f"unknown option {option!r}")
    command = rest[1:]
    if not command:
        raise ValueError("no command given")
    return mode, read, write, net, command


def _reset_signals() -> None:
    """Python ignores SIGPIPE and SIGXFSZ and ignored signals survive ``exec``: reset them,
    so that ``yes | head`` ends the way it does in a terminal and a file-size limit kills."""
    for ignored_by_python in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(ignored_by_python, signal.SIG_DFL)


def _exec(command: list[str]) -> NoReturn:
    try:
        os.execvp(command[0], command)  # noqa: S606 - running argv without a shell is the point
    except FileNotFoundError:
        print(f"plancord sandbox: {command[0]}: command not found", file=sys.stderr)
        os._exit(EXIT_NOT_FOUND)
    except OSError as exc:
        print(f"plancord sandbox: {command[0]}: {exc.strerror}", file=sys.stderr)
        os._exit(EXIT_CANNOT_RUN)


def _children() -> list[int]:
    """Pids whose parent is this process, read from ``/proc`` (empty when it is unreadable)."""
    me = str(os.getpid())
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == me:
            found.append(int(entry))
    return found


def _kill_descendants() -> None:
    """Kill and reap everything reparented to this subreaper, until nothing is left."""
    for _ in range(1000):
        children = _children()
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
            if not children:
                os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _socket_filter() -> Callable[..., None]:
    """``socket_filter.install``, loaded from beside this file before Landlock hides it
    (the trampoline imports nothing else)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "socket_filter.py")
    spec = importlib.util.spec_from_file_location("plancord_socket_filter", path)
    if spec is None or spec.loader is None:
        raise OSError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    install: Callable[..., None] = module.install
    return install


def _jail_and_exec(
    rules: list[tuple[str, int]], allow_tcp: bool, command: list[str], *, sockets: bool = True
) -> NoReturn:
    """``sockets``: leave sockets to Landlock alone (the inner wall, inside bubblewrap's
    namespaces); otherwise the socket filter goes on too, with inet sockets only if
    ``allow_tcp`` (the network)."""
    try:
        filter_sockets = None if sockets else _socket_filter()
        restrict_self(landlock_abi(), rules, allow_tcp=allow_tcp)
        if filter_sockets is not None:
            filter_sockets(network=allow_tcp)
    except OSError as exc:
        print(f"plancord sandbox: could not apply Landlock or its filter: {exc}", file=sys.stderr)
        os._exit(EXIT_CANNOT_RUN)
    _reset_signals()
    _exec(command)


def _supervise(rules: list[tuple[str, int]], allow_tcp: bool, command: list[str]) -> NoReturn:
    """Run the jailed command as a child; adopt and kill whatever it leaves behind.

    The supervisor itself stays outside the jail, so it can read ``/proc`` to find what was
    reparented to it; the jail (with signal scoping) keeps the command from signalling it.
    """
    libc = _libc()
    if libc is None:
        print("plancord sandbox: libc is not available", file=sys.stderr)
        sys.exit(EXIT_CANNOT_RUN)
    _prctl(libc, _PR_SET_CHILD_SUBREAPER, "prctl(PR_SET_CHILD_SUBREAPER)")

    def _stop(signum: int, frame: object) -> None:
        _kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, _stop)
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # No network namespace here: no unix sockets, and without the network no UDP either.
        _jail_and_exec(rules, allow_tcp, command, sockets=False)
    _, status = os.waitpid(pid, 0)
    _kill_descendants()
    os._exit(_exit_code(status))


def main(argv: list[str]) -> NoReturn:
    """Trampoline: jail the command, then run it; never runs it unjailed."""
    try:
        mode, read, write, net, command = _parse(argv)
    except ValueError as exc:
        print(f"plancord sandbox: {exc}", file=sys.stderr)
        sys.exit(2)
    if mode == "readonly":
        _jail_and_exec(readonly_rules(), False, command)
    _supervise(confine_rules(read, write), net, command)


if __name__ == "__main__":
    main(sys.argv[1:])
