"""Path globs matched in bounded time, without regular expressions.

A glob such as ``"**/" * 160 + "x"`` translated to a Python regex backtracks for tens of
seconds, and Python's ``re`` holds the GIL while it does, so even a worker thread freezes the
event loop. This matcher never backtracks over segments: a pattern is split into path
segments, ``**`` segments are handled by tracking the *set* of pattern positions a path prefix
can reach (a state, at most one entry per segment), and each other segment is matched against
one name with the classic two-pointer wildcard algorithm (at most ``len(name) * len(segment)``
steps). Walks carry the state from a directory to its entries, so each entry costs one step,
and a directory whose state is empty is not entered at all.

Semantics (as before): ``*`` and ``?`` stay within one name, ``[abc]``, ``[a-z]``, ``[!x]`` or
``[^x]`` match one character of a class, ``**`` as a whole segment spans zero or more
directories (one or more when it ends the pattern: ``docs/**`` is what is inside ``docs``),
and ``**`` inside a segment is a plain ``*``.
"""

from __future__ import annotations

from dataclasses import dataclass

#: A pattern has at most this many segments; a 500-character pattern has fewer.
MAX_SEGMENTS = 256

_STAR = "*"
_ANY = "?"


@dataclass(frozen=True, slots=True)
class _Class:
    """``[...]``: single characters and ranges; ``negated`` for ``[!...]`` / ``[^...]``."""

    chars: frozenset[str]
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def matches(self, char: str) -> bool:
        inside = char in self.chars or any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True, slots=True)
class _Literal:
    char: str


_Item = _Literal | _Class | str  # the str is _STAR or _ANY


def _parse_class(segment: str, start: int) -> tuple[_Class, int] | None:
    """The class opening at ``segment[start] == '['`` and the index after it; None if unclosed."""
    i = start + 1
    negated = i < len(segment) and segment[i] in "!^"
    if negated:
        i += 1
    body_start = i
    if i < len(segment) and segment[i] == "]":
        i += 1
    close = segment.find("]", i)
    if close == -1:
        return None
    body = segment[body_start:close]
    chars: set[str] = set()
    ranges: list[tuple[str, str]] = []
    j = 0
    while j < len(body):
        if j + 2 < len(body) and body[j + 1] == "-":
            ranges.append((body[j], body[j + 2]))
            j += 3
        else:
            chars.add(body[j])
            j += 1
    return _Class(frozenset(chars), tuple(ranges), negated), close + 1


def _parse_segment(segment: str) -> tuple[_Item, ...]:
    items: list[_Item] = []
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            if not items or items[-1] != _STAR:
                items.append(_STAR)
            i += 1
        elif char == "?":
            items.append(_ANY)
            i += 1
        elif char == "[" and (parsed := _parse_class(segment, i)) is not None:
            items.append(parsed[0])
            i = parsed[1]
        else:
            items.append(_Literal(char))
            i += 1
    return tuple(items)


def _item_matches(item: _Item, char: str) -> bool:
    if isinstance(item, _Literal):
        return item.char == char
    if isinstance(item, _Class):
        return item.matches(char)
    return item == _ANY


def match_segment(items: tuple[_Item, ...], name: str) -> bool:
    """Whether one name matches one parsed segment; at most ``len(name) * len(items)`` steps.

    The two-pointer algorithm: on a mismatch, only the most recent ``*`` is retried one
    character further, which is enough because a later ``*`` can absorb whatever an earlier
    one would have.
    """
    p = n = 0
    star = -1
    star_n = 0
    while n < len(name):
        if p < len(items) and items[p] == _STAR:
            star, star_n = p, n
            p += 1
        elif p < len(items) and _item_matches(items[p], name[n]):
            p += 1
            n += 1
        elif star != -1:
            p = star + 1
            star_n += 1
            n = star_n
        else:
            return False
    while p < len(items) and items[p] == _STAR:
        p += 1
    return p == len(items)


_DOUBLE_STAR = None  # a ``**`` segment in GlobPattern.segments

State = frozenset[int]


class GlobTooComplex(ValueError):
    """The pattern has more segments than ``MAX_SEGMENTS``."""


class GlobPattern:
    """A compiled path glob. ``match`` a whole relative path, or walk with ``start``/``step``."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        segments: list[tuple[_Item, ...] | None] = []
        for part in pattern.split("/"):
            if part == "**":
                if segments and segments[-1] is _DOUBLE_STAR:
                    continue  # "**/**" spans exactly what "**" spans
                segments.append(_DOUBLE_STAR)
            else:
                segments.append(_parse_segment(part))
        if len(segments) > MAX_SEGMENTS:
            raise GlobTooComplex(
                f"The pattern has {len(segments)} path segments; "
                f"at most {MAX_SEGMENTS} are allowed."
            )
        self._segments = tuple(segments)
        self._end = len(segments)
        self.start: State = self._closure((0,))

    def _closure(self, positions: tuple[int, ...] | set[int]) -> State:
        """Positions plus what a non-final ``**`` reaches by spanning zero names."""
        reached = set(positions)
        pending = list(positions)
        while pending:
            at = pending.pop()
            if at < self._end - 1 and self._segments[at] is _DOUBLE_STAR and at + 1 not in reached:
                reached.add(at + 1)
                pending.append(at + 1)
        return frozenset(reached)

    def step(self, state: State, name: str) -> State:
        """The state after one more path segment ``name``."""
        following: set[int] = set()
        for at in state:
            if at == self._end:
                continue
            segment = self._segments[at]
            if segment is _DOUBLE_STAR:
                following.add(at)
                if at == self._end - 1:
                    following.add(self._end)
            elif match_segment(segment, name):
                following.add(at + 1)
        return self._closure(following) if following else frozenset()

    def accepts(self, state: State) -> bool:
        return self._end in state

    def match(self, path: str) -> bool:
        """Whether a relative path ``a/b/c`` (no leading or trailing ``/``) matches."""
        state = self.start
        for name in path.split("/"):
            state = self.step(state, name)
            if not state:
                return False
        return self.accepts(state)
