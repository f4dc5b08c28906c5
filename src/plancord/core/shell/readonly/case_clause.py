"""``case WORD in PATTERN) LIST ;; … esac``, decided when judged, as bash decides it.

The word is read by the same reader as any other (a substitution in it runs first as a
read-only stage), and bash neither splits nor globs it. Each pattern is matched the way
bash's ``case`` matches: unquoted ``*`` and ``?`` are wildcards (``*`` crosses ``/``), every
quoted character is itself; a bracket expression is refused rather than imitated. The first
pattern that matches picks its list, and only ``;;`` ends a list (``;&`` and ``;;&`` fall
through, and are refused).

Every list is judged read-only, whether it is picked or not; what runs is an ``if`` whose
conditions are the decision already made: ``if false; then L1; elif true; then L2; fi``
runs ``L2`` alone and ends with its status, and with no ``true`` branch it runs nothing and
ends with 0, as ``case`` does when no pattern matches. A ``case`` is not read inside a loop
or an ``if``, nor an ``if`` inside a ``case``.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.cursor import Cursor
from plancord.core.shell.readonly.parameters import HOME_VALUE
from plancord.core.shell.readonly.raw import LOOP_VALUES, RawCommand, RawIf, RawScript, Word
from plancord.core.shell.readonly.verdict import Denied, shown

_LIST_END: Final = frozenset((";;", "esac"))
_MARKERS: Final = frozenset((*LOOP_VALUES, HOME_VALUE))


def read_case(reader: Cursor) -> RawIf:
    """``case WORD in …; esac``, after the ``case``."""
    subject = _word(reader, "the `case` word")
    keyword = reader.token()
    if keyword is None or not isinstance(keyword[1], Word) or keyword[1].source != "in":
        raise Denied("`case WORD` is followed by `in`")
    branches: list[tuple[RawScript, RawScript]] = []
    picked = False
    reader.in_branch = True
    try:
        while True:
            patterns = _patterns(reader)
            if patterns is None:
                break
            body = reader.script(_LIST_END)
            if reader.ended == ";;" and reader.s.startswith("&", reader.i):
                raise Denied("`;;&` goes on testing the next `case` patterns; not evaluated")
            matches = not picked and any(_matches(p, subject.text) for p in patterns)
            picked = picked or matches
            branches.append((_status(matches), body))
            if reader.ended == "esac":
                break
    finally:
        reader.in_branch = False
    if not branches:
        raise Denied("a `case` with no pattern runs nothing")
    reader.evaluated("`case WORD in …`: the matching list picked, every list judged (case)")
    return RawIf(branches, None)


def _word(reader: Cursor, what: str) -> Word:
    token = reader.token()
    if token is None or not isinstance(token[1], Word):
        raise Denied(f"{what} is missing")
    word = token[1]
    if _MARKERS & set(word.text):
        raise Denied(f"{what} `{shown(word.source)}` holds a value plan mode does not read")
    return word


def _patterns(reader: Cursor) -> list[Word] | None:
    """The patterns of the next list, or None at ``esac``."""
    token = reader.token()
    while token is not None and token[1] == "\n":
        token = reader.token()
    if token is not None and isinstance(token[1], Word) and token[1].source == "esac":
        return None
    if token is not None and token[1] == "(":
        token = reader.token()
    patterns: list[Word] = []
    while True:
        if token is None or not isinstance(token[1], Word):
            raise Denied("a `case` pattern is missing or is not a word")
        word = token[1]
        if _MARKERS & set(word.text) or word.separators is not None:
            raise Denied(f"the `case` pattern `{shown(word.source)}` is not read")
        patterns.append(word)
        token = reader.token()
        if token is not None and token[1] == ")":
            return patterns
        if token is None or token[1] != "|":
            raise Denied("a `case` pattern ends with `)`, alternatives joined by `|`")
        token = reader.token()


def _matches(pattern: Word, subject: str) -> bool:
    parts: list[str] = []
    for char, quoted in zip(pattern.text, pattern.quoted, strict=True):
        if quoted:
            parts.append(re.escape(char))
        elif char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        elif char in "[]\\":
            raise Denied(
                f"the `case` pattern `{shown(pattern.source)}` holds `{char}` unquoted, "
                "which plan mode does not match"
            )
        else:
            parts.append(re.escape(char))
    return re.fullmatch("".join(parts), subject, re.DOTALL) is not None


def _status(success: bool) -> RawScript:
    text = "true" if success else "false"
    return RawScript([[RawCommand([Word(text, (True,) * len(text), text)])]])
