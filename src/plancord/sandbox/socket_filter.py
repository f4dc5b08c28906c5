"""The fallback's seccomp filter: no unix sockets ever, no UDP when the network is off.

Why this exists: Landlock turns TCP off but leaves other sockets alone, so under the Landlock
fallback (no user namespaces, hence no network namespace) a command could reach a host
service through a unix socket that has a path (a Docker socket, a database's socket) or send
UDP. The trampoline installs this filter before ``exec`` in every fallback run:
``socket(AF_UNIX, …)`` fails with EACCES, and so does ``io_uring_setup`` (io_uring can open
sockets past the filter); where the sandbox gives the command no network, so does any
``AF_INET``/``AF_INET6`` socket that is not a stream (TCP is Landlock's). An agent the
operator gave the network keeps UDP (name resolution needs it) but not unix sockets: it
shares the host's network namespace, and the host's unix sockets are not the network.

Every AF_UNIX socket is refused, not only those with a path: seccomp sees the arguments of
``connect`` as a pointer it cannot follow, so the family at ``socket`` is all it can judge.
Abstract sockets are already Landlock's (ABI 6 scopes them); programs that want a unix
socket of their own (a local agent, ``syslog(3)`` through ``/dev/log``, nscd lookups) fail
or do without. ``socketpair`` still works, so pipes between a command's own processes do.

The filter is a classic BPF program built here and installed with ``prctl(PR_SET_SECCOMP)``
(after ``PR_SET_NO_NEW_PRIVS``, which the Landlock trampoline sets first): a real kernel
filter, inherited by every child, that nothing can remove. It needs only ``ctypes`` and
``struct`` because the trampoline runs it in ``python -I -S``. It knows x86-64 and AArch64;
a call from another architecture (x32, 32-bit compat) kills the process.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_KILL_PROCESS = 0x80000000
_RET_DENY = 0x00050000 | errno.EACCES
_LD_ABS_W = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_AND_K = 0x54
_RET_K = 0x06
_X32_BIT = 0x40000000
_AF_UNIX, _AF_INET, _AF_INET6 = 1, 2, 10
_SOCK_STREAM = 1
_SOCK_TYPE_MASK = 0xF

#: machine -> (audit arch, socket syscall, io_uring_setup syscall)
ARCHITECTURES = {
    "x86_64": (0xC000003E, 41, 425),
    "aarch64": (0xC00000B7, 198, 425),
}


def program(machine: str, *, network: bool = False) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) instructions for ``machine``; KeyError if unknown.
    ``network``: inet sockets of every type pass (unix sockets and io_uring still do not)."""
    arch, socket_nr, io_uring_nr = ARCHITECTURES[machine]
    allow, deny, kill = 13, 14, 15
    inet_type = allow if network else 10
    return [
        (_LD_ABS_W, 0, 0, 4),  # 0: arch
        (_JEQ_K, 0, kill - 2, arch),  # 1
        (_LD_ABS_W, 0, 0, 0),  # 2: syscall number
        (_JGE_K, kill - 4, 0, _X32_BIT),  # 3
        (_JEQ_K, deny - 5, 0, io_uring_nr),  # 4
        (_JEQ_K, 0, allow - 6, socket_nr),  # 5
        (_LD_ABS_W, 0, 0, 16),  # 6: args[0], the family (low half)
        (_JEQ_K, deny - 8, 0, _AF_UNIX),  # 7
        (_JEQ_K, inet_type - 9, 0, _AF_INET),  # 8
        (_JEQ_K, inet_type - 10, allow - 10, _AF_INET6),  # 9
        (_LD_ABS_W, 0, 0, 24),  # 10: args[1], the type (low half)
        (_AND_K, 0, 0, _SOCK_TYPE_MASK),  # 11
        (_JEQ_K, allow - 13, deny - 13, _SOCK_STREAM),  # 12
        (_RET_K, 0, 0, _RET_ALLOW),  # 13
        (_RET_K, 0, 0, _RET_DENY),  # 14
        (_RET_K, 0, 0, _RET_KILL_PROCESS),  # 15
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_char_p))


def install(*, network: bool = False) -> None:
    """Install the filter on this process (and so on everything it will start).

    Raises OSError when the kernel refuses it or the architecture is unknown; the caller
    then must not run the command.
    """
    machine = os.uname().machine
    if machine not in ARCHITECTURES:
        raise OSError(errno.ENOSYS, f"no socket filter for {machine}")
    instructions = program(machine, network=network)
    raw = b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)
    buffer = ctypes.create_string_buffer(raw, len(raw))
    fprog = _SockFprog(len(raw) // 8, ctypes.cast(buffer, ctypes.c_char_p))
    libc = ctypes.CDLL(None, use_errno=True)
    done = libc.prctl(
        _PR_SET_SECCOMP,
        ctypes.c_ulong(_SECCOMP_MODE_FILTER),
        ctypes.byref(fprog),
        ctypes.c_ulong(0),
        ctypes.c_ulong(0),
    )
    if done != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"prctl(PR_SET_SECCOMP): {os.strerror(number)}")
