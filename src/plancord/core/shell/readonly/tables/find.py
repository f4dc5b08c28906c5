"""find: its own grammar of starting points and an expression, and the commands ``-exec`` runs.

Read from find(1) of GNU findutils 4.9.0. ``-exec CMD … {} +`` and ``-exec CMD … {} ;`` run
CMD on the paths find found; they are allowed when CMD is one of the simple readers
(``EXEC_SAFE``), itself judged read-only by its own rule, and ``{}`` is its last word: each
path find adds begins with a starting point the filter checked (so never with ``-``) and
can only make such a reader read or print. A ``{}`` anywhere else (``-e {}``, ``x{}``) would
make a file's name into a pattern, a script or an option value, and is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule
from plancord.core.shell.readonly.options import names
from plancord.core.shell.readonly.paths import check_path
from plancord.core.shell.readonly.verdict import Denied, shown

SOURCE: Final = "find(1), GNU findutils 4.9.0"

_FIND_FLAGS: Final = names(
    "-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable "
    "-nouser -nogroup -depth -d -follow -xdev -mount -daystart -noleaf -ignore_readdir_race "
    "-noignore_readdir_race -warn -nowarn -not -a -and -o -or ! ( ) , -help --help "
    "-version --version"
)
_FIND_VALUES: Final = names(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type "
    "-xtype -size -mtime -mmin -atime -amin -ctime -cmin -used -user -group -uid -gid "
    "-perm -links -inum -maxdepth -mindepth -regextype -fstype -printf -context"
)
_FIND_FILE_VALUES: Final = names("-newer -anewer -cnewer -samefile")
_FIND_NEWER_XY: Final = re.compile(r"-newer[aBcm][aBcmt]")
_FIND_REFUSED: Final = {
    "-execdir": "runs commands in each file's directory; use `-exec`",
    "-ok": "asks on the terminal",
    "-okdir": "asks on the terminal",
    "-delete": "deletes files",
    "-fprint": "writes to a file",
    "-fprint0": "writes to a file",
    "-fprintf": "writes to a file",
    "-fls": "writes to a file",
    "-D": "writes debugging output the filter does not model",
}

EXEC_SAFE: Final = names(
    "cat head tail wc grep egrep fgrep rg ls stat file basename dirname nl tac rev md5sum "
    "sha1sum sha256sum sha512sum"
)
"""Commands ``find -exec`` may run: the paths find adds can only make them read or print."""


def find_rule(rules: Mapping[str, Rule]) -> Rule:
    """find's rule, judging a command ``-exec`` runs with ``rules``."""

    def rule(call: Call) -> None:
        """find's grammar, with ``-exec`` running only a reader judged by its own rule."""
        _check_find(call, rules)

    return rule


def _check_find(call: Call, rules: Mapping[str, Rule]) -> None:
    args = call.args
    i = 0
    while i < len(args) and (args[i] in ("-H", "-L", "-P") or re.fullmatch(r"-O[0-3]", args[i])):
        i += 1
    if i < len(args) and args[i] == "-D":
        raise Denied(f"`find -D` {_FIND_REFUSED['-D']}")
    starts: list[str] = []
    while i < len(args) and not (args[i].startswith("-") or args[i] in ("(", ")", "!", ",")):
        check_path(call.place, args[i], what="lists")
        starts.append(args[i])
        i += 1
    while i < len(args):
        word = args[i]
        if word == "-exec":
            i = _check_exec(call, rules, i + 1, starts or ["."])
            continue
        if word in _FIND_REFUSED:
            raise Denied(f"`find {word}` {_FIND_REFUSED[word]}")
        if word in _FIND_FLAGS:
            i += 1
            continue
        if word in _FIND_VALUES or word in _FIND_FILE_VALUES or _FIND_NEWER_XY.fullmatch(word):
            if i + 1 >= len(args):
                raise Denied(f"`find {word}` needs a value")
            if word in _FIND_FILE_VALUES or (_FIND_NEWER_XY.fullmatch(word) and word[-1] != "t"):
                check_path(call.place, args[i + 1])
            i += 2
            continue
        raise Denied(
            f"`find {shown(word)}` is not a test or action plan mode knows to be read-only"
        )


def _check_exec(call: Call, rules: Mapping[str, Rule], at: int, starts: list[str]) -> int:
    """Judge the command of ``-exec`` starting at ``at``; the index after its terminator."""
    args = call.args
    end = next(
        (
            k
            for k in range(at, len(args))
            if args[k] == ";" or (args[k] == "+" and k > at and args[k - 1] == "{}")
        ),
        None,
    )
    if end is None:
        raise Denied("`find -exec` needs its command ended by `{} +` or `\\;`")
    command = args[at:end]
    if not command or command[-1] != "{}" or len(command) < 2:
        raise Denied(
            "`find -exec` is allowed only as `-exec CMD … {} +` or `-exec CMD … {} \\;`, "
            "with `{}` as the command's last word"
        )
    program, *rest = command[:-1]
    if any("{}" in word for word in command[:-1]):
        raise Denied(
            f"`find -exec {shown(program)}`: `{{}}` inside another word would make a file's "
            "name part of an option or pattern"
        )
    if program not in EXEC_SAFE:
        raise Denied(
            f"`find -exec {shown(program)}`: only simple readers (grep, cat, head, wc, ls…) "
            "may run on the paths find adds"
        )
    # Every path find adds lies beneath a starting point, already checked.
    rules[program](Call(program, [*rest, *starts], call.place))
    return end + 1
