"""Read a GNU sed script (sed 4.9) far enough to know every command in it.

A sed script can write files (``w``, ``W``, ``s///w``), run shell commands (``e``, ``s///e``)
and read other files (``r``, ``R``). The parser below follows GNU sed's own rules for where
addresses, regexes, replacements, labels and texts end, so each command letter is seen as
sed will see it, and anything it does not recognise is refused.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.verdict import shown as _quote

_SED_NO_ARGUMENT: Final = frozenset("=dDgGhHnNpPxzF")


def script_problem(script: str) -> str | None:
    """Why a GNU sed script could write, run or read something, or None when it only prints.

    The parser follows GNU sed's own rules for where commands, regexes, replacements and
    texts end, and refuses anything it does not recognise.
    """
    s, n, i, depth = script, len(script), 0, 0
    while True:
        while i < n and s[i] in " \t\n;":
            i += 1
        if i >= n:
            break
        if s[i] == "#":
            end = s.find("\n", i)
            if end < 0:
                break
            i = end
            continue
        start = i
        i = _address(s, i, first=True)
        if i < 0:
            return "the sed script has an address plan mode cannot read"
        has_address = i > start
        i = _skip_blanks(s, i)
        if has_address and i < n and s[i] == ",":
            i = _address(s, _skip_blanks(s, i + 1), first=False)
            if i < 0:
                return "the sed script has an address plan mode cannot read"
        i = _skip_blanks(s, i)
        while i < n and s[i] == "!":
            i = _skip_blanks(s, i + 1)
        if i >= n:
            return "the sed script ends in the middle of a command"
        command = s[i]
        i += 1
        if command == "{":
            depth += 1
            continue
        if command == "}":
            depth -= 1
            if depth < 0:
                return "the sed script has an unmatched `}`"
        elif command in "wW":
            return "`sed` `w` commands write to files"
        elif command == "e":
            return "`sed` `e` runs shell commands"
        elif command in "rR":
            return "`sed` `r` reads other files into the output; use `cat` for that"
        elif command in _SED_NO_ARGUMENT:
            pass
        elif command in "qQl":
            i = _skip_blanks(s, i)
            while i < n and s[i].isdigit():
                i += 1
        elif command in "btT:v":
            end = i
            while end < n and s[end] not in ";\n":
                end += 1
            label = s[i:end].strip()
            if (command == ":" and (has_address or not label)) or not re.fullmatch(
                r"[A-Za-z0-9_.-]*", label
            ):
                return f"the sed label `{_quote(label)}` is not one plan mode can read"
            i = end
            continue
        elif command in "aic":
            i = _skip_blanks(s, i)
            if s.startswith("\\\n", i):
                i += 2
            while i < n and s[i] != "\n":
                i += 2 if s[i] == "\\" else 1
            continue
        elif command in "sy":
            if i >= n or s[i] in "\n\\":
                return f"the sed `{command}` command has no delimiter"
            delimiter = s[i]
            i = _delimited(s, i + 1, delimiter)
            if i >= 0:
                i = _delimited(s, i, delimiter)
            if i < 0:
                return f"the sed `{command}` command is not terminated"
            while command == "s" and i < n and (s[i] in "gpiImM \t" or s[i].isdigit()):
                i += 1
            if command == "s" and i < n and s[i] == "w":
                return "`sed` `s///w` writes to a file"
            if command == "s" and i < n and s[i] == "e":
                return "`sed` `s///e` runs the result as a shell command"
        else:
            return f"the sed command `{_quote(command)}` is not one plan mode knows to be read-only"
        i = _skip_blanks(s, i)
        if i < n and s[i] not in ";\n}#":
            return f"the sed script has unexpected text after `{_quote(command)}`"
    if depth:
        return "the sed script has an unmatched `{`"
    return None


def _skip_blanks(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _address(s: str, i: int, *, first: bool) -> int:
    """Skip one sed address starting at ``s[i]``; -1 when it is malformed."""
    n = len(s)
    if i >= n:
        return i
    c = s[i]
    if c.isdigit() or (not first and c in "+~"):
        i += 1
        while i < n and s[i].isdigit():
            i += 1
        if first and i < n and s[i] == "~":
            i += 1
            while i < n and s[i].isdigit():
                i += 1
        return i
    if c == "$":
        return i + 1
    if c == "/":
        i = _delimited(s, i + 1, "/")
    elif c == "\\":
        if i + 1 >= n or s[i + 1] in "\n\\":
            return -1
        i = _delimited(s, i + 2, s[i + 1])
    else:
        return i
    while 0 <= i < n and s[i] in "IM":
        i += 1
    return i


def _delimited(s: str, i: int, delimiter: str) -> int:
    """Index after the unescaped ``delimiter`` that closes a regex or replacement, or -1."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == delimiter:
            return i + 1
        if c == "\n":
            return -1
        i += 1
    return -1
