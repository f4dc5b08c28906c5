"""md5sum, sha*sum and b2sum: printing checksums, and checking a list of them.

``-c LIST`` opens every file the list names, so the list is read when the command is judged
and each name in it is checked like an operand (GNU coreutils 9.1 formats: ``HASH  NAME``,
``HASH *NAME``, a leading ``\\`` for escaped names, and the BSD ``ALGO (NAME) = HASH``).
The list must be a file: names arriving on standard input cannot be checked.
"""

from __future__ import annotations

import os
import re
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule
from plancord.core.shell.readonly.options import OptionTable, parse
from plancord.core.shell.readonly.paths import check_path
from plancord.core.shell.readonly.verdict import Denied, shown

MAX_LIST_BYTES: Final = 1 << 20
"""A checksum list longer than this is refused rather than read."""

CHECKSUM: Final = OptionTable(
    source="md5sum(1) and sha*sum(1), GNU coreutils 9.1",
    flags="bctzw",
    long_flags="binary check text tag zero ignore-missing quiet status strict warn help version",
)
_GNU_LINE: Final = re.compile(r"(\\?)[0-9a-fA-F]+ [ *](.*)")
_BSD_LINE: Final = re.compile(r"(\\?)[A-Za-z0-9-]+ ?\((.*)\) ?= ?[0-9a-fA-F]+")


def _unescape(name: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), name)


def listed_names(text: str) -> list[str]:
    """The file names a checksum list makes ``-c`` open, in order. A line that is neither
    blank nor in a format the filter reads is refused rather than guessed at."""
    found: list[str] = []
    for line in text.split("\n"):
        line = line.removesuffix("\r").lstrip(" \t")  # coreutils skips leading blanks
        if not line:
            continue
        match = _BSD_LINE.fullmatch(line) or _GNU_LINE.fullmatch(line)
        if match is None:
            raise Denied(f"the checksum list has a line the filter cannot read: `{shown(line)}`")
        escaped, name = match.groups()
        found.append(_unescape(name) if escaped else name)
    return found


def _check_checksum(call: Call) -> None:
    parsed = parse(call.program, call.args, CHECKSUM)
    lists = list(parsed.operands)
    for path in lists:
        check_path(call.place, path)
    if not parsed.has("-c", "--check"):
        return
    if not lists or "-" in lists:
        raise Denied(
            f"`{call.program} -c` reads a list from standard input, whose file names the "
            "filter cannot check"
        )
    for path in lists:
        resolved = call.place.resolve(path)
        if not call.place.shows_host(resolved):
            raise Denied(
                f"the checksum list `{shown(path)}` is outside the workspace, where plan mode "
                "does not read the names it lists"
            )
        try:
            if os.path.getsize(resolved) > MAX_LIST_BYTES:
                raise Denied(f"the checksum list `{shown(path)}` is too long to check")
            with open(resolved, "rb") as handle:
                text = handle.read(MAX_LIST_BYTES).decode("utf-8", "surrogateescape")
        except OSError:
            continue  # the program reports a missing or unreadable list
        for name in listed_names(text):
            check_path(call.place, name)


RULES: Final[dict[str, Rule]] = dict.fromkeys(
    ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"),
    _check_checksum,
)
