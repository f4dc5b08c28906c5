"""Programs that only show something when nobody is at a terminal: pagers and man run as
``cat``, ``tar -t`` lists an archive, ``fd`` finds files, ``python --version`` says which.

The shell tool never gives a command a terminal (its output is a pipe), and a pager whose
output is not a terminal copies its input out and reads no keys: less(1) "behaves like cat",
more(1) likewise. So they are read-only with their display options; an option that names a
log file, a key file or a command (``less -o``, ``+cmd``) is refused. man(1) shows the
system's pages only: a page named by a path (a workspace file would be read by troff) is
refused. Tables are read from the manuals of less 590, util-linux 2.38 more, man-db 2.11,
GNU tar 1.34, fd 8.7 and CPython 3.11.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, table_rule
from plancord.core.shell.readonly.options import OptionTable, parse
from plancord.core.shell.readonly.paths import check_path
from plancord.core.shell.readonly.verdict import Denied, shown

LESS: Final = OptionTable(
    source="less(1), less 590 (as cat when its output is not a terminal)",
    flags="aBcCeEfFgGiIJKLmMnNqQrRsSuUVwWX~",
    long_flags="quit-at-eof QUIT-AT-EOF force quit-if-one-screen hilite-search "
    "HILITE-SEARCH ignore-case IGNORE-CASE status-column quit-on-intr no-lessopen "
    "long-prompt LONG-PROMPT line-numbers LINE-NUMBERS quiet QUIET silent SILENT "
    "raw-control-chars RAW-CONTROL-CHARS squeeze-blank-lines chop-long-lines underline-special "
    "UNDERLINE-SPECIAL hilite-unread HILITE-UNREAD no-init tilde help version",
    reasons={
        "-o": "writes a log file",
        "-O": "writes a log file",
        "-k": "reads key bindings that can run commands",
        "--lesskey-file": "reads key bindings that can run commands",
    },
    abbreviations=False,
)
MORE: Final = OptionTable(
    source="more(1), util-linux 2.38 (as cat when its output is not a terminal)",
    flags="dflcpsu",
    long_flags="silent logical no-pause print-over clean-print squeeze plain help version",
    abbreviations=False,
)
MAN: Final = OptionTable(
    source="man(1), man-db 2.11 (pages of the system only)",
    flags="afkwW",
    long_flags="all whatis apropos where path where-cat location-cat",
    reasons={
        "-l": "formats a file troff reads as a program",
        "-P": "runs a pager command",
        "-H": "runs a browser",
    },
    abbreviations=False,
)
FD: Final = OptionTable(
    source="fd(1), fd 8.7",
    flags="HIusiglFaLp01q",
    values="dtEeScj",
    long_flags="hidden no-ignore no-ignore-vcs unrestricted case-sensitive ignore-case glob "
    "regex fixed-strings absolute-path follow full-path print0 quiet show-errors "
    "strip-cwd-prefix prune one-file-system no-global-ignore-file help version",
    long_values="max-depth min-depth exact-depth type exclude extension size changed-within "
    "changed-before color threads max-results ignore-file base-directory search-path owner",
    reasons={
        "-x": "runs a command on each file",
        "--exec": "runs a command on each file",
        "-X": "runs a command on the files",
        "--exec-batch": "runs a command on the files",
        "-l": "runs `ls` on each file; use `fd … | xargs ls -l`",
        "--list-details": "runs `ls` on each file",
    },
    abbreviations=False,
)
_FD_PATHS: Final = ("--ignore-file", "--base-directory", "--search-path")
_MAN_PAGE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:+-]*")
_TAR_LIST_LETTERS: Final = frozenset("tvzjJf")
_TAR_LONG: Final = {"--list", "--verbose", "--gzip", "--bzip2", "--xz", "--zstd", "--file"}


def _check_man(call: Call) -> None:
    """man shows the system's pages: each operand is a section or a page's name, never a
    path (troff would read a workspace file as a program)."""
    parsed = parse(call.program, call.args, MAN)
    for word in parsed.operands:
        if not _MAN_PAGE.fullmatch(word):
            raise Denied(f"`man {shown(word)}`: man shows only the system's pages, by name")


def _check_pager(table: OptionTable) -> Rule:
    plain = table_rule(table)

    def rule(call: Call) -> None:
        """less and more with display options only: as cat, their output being a pipe."""
        for word in call.args:
            if word.startswith("+"):
                raise Denied(f"`{call.program} {shown(word)}` runs a pager command")
        plain(call)

    return rule


def _check_fd(call: Call) -> None:
    """fd's pattern, then the directories it searches; ``--exec`` and ``-l`` refused."""
    parsed = parse(call.program, call.args, FD)
    for value in parsed.values(*_FD_PATHS):
        check_path(call.place, value, what="lists")
    for word in parsed.operands[1:]:
        check_path(call.place, word, what="lists")


def _check_python(call: Call) -> None:
    """Only ``python --version`` and ``python -V``, exactly: any other form runs code."""
    if call.args not in (["--version"], ["-V"]):
        raise Denied(
            f"`{call.program}` runs code; only `{call.program} --version` (or `-V`) is allowed"
        )


def _check_tar(call: Call) -> None:
    """``tar -t`` (``--list``) only, with ``-v``, ``-z``/``-j``/``-J`` and ``-f FILE`` (a
    local file: ``host:file`` would run a remote shell); every other mode writes."""
    args = list(call.args)
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]  # the old form: `tar tvf x.tar`
    listing = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word.startswith("--"):
            name, has_value, value = word.partition("=")
            if name not in _TAR_LONG:
                raise Denied(f"`tar {shown(word)}`: only `tar -t` (listing) is allowed")
            listing |= name == "--list"
            if name == "--file":
                if not has_value:
                    if i >= len(args):
                        raise Denied("`tar --file` needs a value")
                    value, i = args[i], i + 1
                _archive(call, value)
            continue
        if not word.startswith("-") or word == "-":
            raise Denied(f"`tar {shown(word)}`: a member name to list is not evaluated")
        letters = word[1:]
        for index, letter in enumerate(letters):
            if letter not in _TAR_LIST_LETTERS:
                raise Denied(f"`tar -{shown(letter)}`: only `tar -t` (listing) is allowed")
            listing |= letter == "t"
            if letter == "f":
                rest = letters[index + 1 :]
                if not rest:
                    if i >= len(args):
                        raise Denied("`tar -f` needs a value")
                    rest, i = args[i], i + 1
                _archive(call, rest)
                break
    if not listing:
        raise Denied("only `tar -t` (listing an archive) is allowed; other modes write")


def _archive(call: Call, name: str) -> None:
    if name == "-":
        return
    if ":" in name:
        raise Denied(f"`tar -f {shown(name)}`: a name with `:` is a remote archive")
    check_path(call.place, name)


RULES: Final[dict[str, Rule]] = {
    "less": _check_pager(LESS),
    "more": _check_pager(MORE),
    "man": _check_man,
    "fd": _check_fd,
    "fdfind": _check_fd,
    "python": _check_python,
    "python3": _check_python,
    "tar": _check_tar,
}
