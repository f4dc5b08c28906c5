"""Read a jq filter (jq 1.6 and 1.7) the way jq's lexer reads it, to know what it can reach.

A text search is wrong both ways: ``\\$ENV`` misses ``$ ENV`` (jq 1.6 reads ``$`` and the
name as two tokens, with blanks or a comment between) and refuses ``.env`` (a field) or
``{env: 1}`` (an object key). So the filter is split into jq's tokens: strings (with the
expressions interpolated in them, read again as code), comments, numbers, fields
(``.name``), formats (``@sh``), variables (``$name``, ``$__loc__``) and identifiers, and
only an identifier in a position where jq calls it, or a variable jq looks up, is judged.

Refused: the environment (``env``, ``$ENV``), modules (``import``, ``include``,
``modulemeta``, ``get_search_list``: they read code and data from jq's search path), and
what can run without end (``def`` for recursion, ``repeat``, ``while``, ``until``, ``range``,
``recurse`` with a generator): jq filters are programs, and these make a read never finish.
A comment ending in a backslash is refused: jq 1.7 continues it on the next line and
jq 1.6 does not, so the two would read different programs.
"""

from __future__ import annotations

import re
from typing import Final

_REACH: Final = {
    "env": "reads the environment, which can hold secrets",
    "$ENV": "reads the environment, which can hold secrets",
    "import": "loads a module from jq's search path",
    "include": "loads a module from jq's search path",
    "modulemeta": "loads a module from jq's search path",
    "get_search_list": "shows jq's module search path",
}
_ENDLESS: Final = "can run without end"
_NEVER_ENDING: Final = frozenset({"def", "repeat", "while", "until", "range"})
_IDENTIFIER: Final = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*")
_NUMBER: Final = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BLANKS: Final = re.compile(r"(?:[ \t\r\n]+|#[^\n]*)*")

Token = tuple[str, str]


class _Unreadable(Exception):
    pass


def filter_problem(text: str) -> str | None:
    """Why a jq filter could read the environment, load code or never end; None if it only
    reads its input."""
    try:
        tokens = _tokens(text)
    except _Unreadable as exc:
        return f"the jq filter cannot be read: {exc}"
    for index, (kind, value) in enumerate(tokens):
        if kind == "variable" and value in _REACH:
            return f"the jq filter uses `{value}`, which {_REACH[value]}"
        if kind != "identifier" or _is_object_key(tokens, index):
            continue
        if value in _REACH:
            return f"the jq filter uses `{value}`, which {_REACH[value]}"
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        if value in _NEVER_ENDING or (value == "recurse" and following == "("):
            return f"the jq filter uses `{value}`, which {_ENDLESS}"
    return None


def _is_object_key(tokens: list[Token], index: int) -> bool:
    """``{name: …}`` and ``{name}`` (short for ``{name: .name}``) name a key, not a call."""
    if index == 0 or tokens[index - 1][1] not in ("{", ","):
        return False
    following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
    if following not in (":", ",", "}"):
        return False
    depth = 0
    for kind, value in reversed(tokens[:index]):
        if kind != "op":
            continue
        if value in (")", "]", "}"):
            depth += 1
        elif value in ("(", "[", "{"):
            if depth == 0:
                return value == "{"
            depth -= 1
    return False


def _tokens(text: str) -> list[Token]:
    tokens: list[Token] = []
    end = _read(text, 0, tokens, inside_string=False)
    if end != len(text):
        raise _Unreadable("an unmatched `)` closes a string interpolation")
    return tokens


def _read(text: str, i: int, tokens: list[Token], *, inside_string: bool) -> int:
    """Tokens from ``text[i:]`` until the end, or (``inside_string``) the ``)`` that closes
    a ``\\(…)`` interpolation; returns the index after what was read."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            end = n if end < 0 else end
            if text[i:end].endswith("\\"):
                raise _Unreadable("a comment ends in a backslash (jq versions disagree)")
            i = end
        elif c == '"':
            i = _string(text, i + 1, tokens)
        elif c == "$":
            if text.startswith("$__loc__", i):
                tokens.append(("variable", "$__loc__"))
                i += len("$__loc__")
                continue
            i = _BLANKS.match(text, i + 1).end()  # type: ignore[union-attr]
            match = _IDENTIFIER.match(text, i)
            if match is None:
                raise _Unreadable("`$` is not followed by a name")
            tokens.append(("variable", "$" + match.group()))
            i = match.end()
        elif c == "@" or (c == "." and _IDENTIFIER.match(text, i + 1)):
            match = _IDENTIFIER.match(text, i + 1)
            if match is None:
                raise _Unreadable("`@` is not followed by a format name")
            tokens.append(("format" if c == "@" else "field", c + match.group()))
            i = match.end()
        elif c.isdigit() or (c == "." and text[i + 1 : i + 2].isdigit()):
            match = _NUMBER.match(text, i)
            assert match is not None
            tokens.append(("number", match.group()))
            i = match.end()
        elif c.isalpha() or c == "_":
            match = _IDENTIFIER.match(text, i)
            assert match is not None
            tokens.append(("identifier", match.group()))
            i = match.end()
        else:
            if c == "(":
                depth += 1
            elif c == ")":
                if inside_string and depth == 0:
                    return i + 1
                depth -= 1
            tokens.append(("op", c))
            i += 1
    if inside_string:
        raise _Unreadable("a string interpolation is not closed")
    return i


def _string(text: str, i: int, tokens: list[Token]) -> int:
    """Read a string whose opening quote is before ``text[i]``; interpolations are read as
    code into ``tokens``. Returns the index after the closing quote."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            tokens.append(("string", ""))
            return i + 1
        if c == "\\":
            if text[i + 1 : i + 2] == "(":
                tokens.append(("op", "("))
                i = _read(text, i + 2, tokens, inside_string=True)
                tokens.append(("op", ")"))
                continue
            i += 2
            continue
        i += 1
    raise _Unreadable("a string is not closed")
