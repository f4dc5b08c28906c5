"""The plan-mode inner wall as a native program, so planning costs what executing costs.

Why this exists: while planning, every command inside bubblewrap first passes through the
Landlock wall (``landlock.py readonly``), and starting a Python interpreter for it costs more
than bubblewrap itself. ``landlock_exec.c`` is the same wall in C (read and execute
everywhere, write only ``/dev/null``, no TCP, no signals or abstract sockets outside, no new
privileges; any failure exits 126 before the command runs), a few hundred microseconds.

It is built from the source shipped beside this module with the system's C compiler, once:
at install time (``python -m plancord.sandbox.wall_helper``, which writes it
beside this module, as the Docker image does), or else on first use into the bot user's
cache directory, where no sandbox can see it. The file's name carries the source's hash, so
a build from another version is never used. Before it is used it is tried once
(``landlock-exec -- /bin/true``); where no compiler is found or the try fails, the runner
keeps the Python trampoline: slower, the same wall.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(__file__).with_name("landlock_exec.c")
BRIDGE_SOURCE = Path(__file__).with_name("net_bridge.c")
"""The loopback bridge to the network proxy (``net_bridge.py`` in C), built the same way."""
_BUILD_SECONDS = 120
_TRY_SECONDS = 10


def _name(source: Path = SOURCE) -> str:
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    return f"{source.stem.replace('_', '-')}-{digest}"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "plancord"


def candidates(source: Path = SOURCE) -> list[Path]:
    """Where a built helper is looked for, in order: beside this module, then the cache."""
    return [source.with_name(_name(source)), _cache_dir() / _name(source)]


def build(directory: Path, source: Path = SOURCE) -> Path:
    """Compile the helper into ``directory`` (atomically); raises OSError or
    subprocess.CalledProcessError when no compiler is found or it fails."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise FileNotFoundError("no C compiler (cc) found")
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = directory / _name(source)
    handle, partial = tempfile.mkstemp(prefix=f".{source.stem}-", dir=directory)
    os.close(handle)
    try:
        subprocess.run(
            [compiler, "-O2", "-Wall", "-o", partial, str(source)],
            check=True,
            capture_output=True,
            timeout=_BUILD_SECONDS,
            stdin=subprocess.DEVNULL,
        )
        os.chmod(partial, 0o755)  # noqa: S103 - a program: others run it, none can write it
        os.replace(partial, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)
    return target


def works(helper: Path) -> bool:
    """Whether ``helper`` jails and runs a command here (``/bin/true`` exits 0 under it)."""
    try:
        done = subprocess.run(
            [str(helper), "--", "true"],
            capture_output=True,
            timeout=_TRY_SECONDS,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def trusted(path: Path) -> bool:
    """Whether ``path`` and its directory belong to this user or root and nobody else may
    write them: a program planted there by another user is never run."""
    for item in (path, path.parent):
        try:
            info = item.stat()
        except OSError:
            return False
        if info.st_uid not in (0, os.geteuid()) or info.st_mode & 0o022:
            return False
    return os.access(path, os.X_OK)


@functools.cache
def native_wall() -> str | None:
    """The path of a working native inner wall, built on first use if a compiler is found;
    None means the runner uses the Python trampoline. Blocking: call it from a worker."""
    found = next((path for path in candidates() if trusted(path)), None)
    if found is None:
        try:
            found = build(candidates()[-1].parent)
        except (OSError, subprocess.SubprocessError):
            return None
    return str(found) if trusted(found) and works(found) else None


@functools.cache
def native_bridge() -> str | None:
    """The path of the native loopback bridge to the network proxy, built on first use if a
    compiler is found; None means the Python bridge. Blocking: call it from a worker."""
    found = next((path for path in candidates(BRIDGE_SOURCE) if trusted(path)), None)
    if found is None:
        try:
            found = build(candidates(BRIDGE_SOURCE)[-1].parent, BRIDGE_SOURCE)
        except (OSError, subprocess.SubprocessError):
            return None
    return str(found) if trusted(found) and _answers(found) else None


def _answers(bridge: Path) -> bool:
    """Whether the bridge runs here: without arguments it prints its usage and exits 126.
    (It is never tried for real outside a sandbox: its server would outlive the try.)"""
    try:
        done = subprocess.run(
            [str(bridge)], capture_output=True, timeout=_TRY_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 126 and done.stderr.startswith(b"usage: net-bridge")


def main() -> int:
    """Build the helpers beside this module (for an install step), then try them."""
    built = build(SOURCE.parent)
    print(f"built {built}")
    if not works(built):
        print("warning: it does not work here (no Landlock?)", file=sys.stderr)
    bridge = build(SOURCE.parent, BRIDGE_SOURCE)
    print(f"built {bridge}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
