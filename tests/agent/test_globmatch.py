"""The glob matcher: the same answers as a plain recursive definition of the semantics, in
time bounded by the pattern and the path, whatever the pattern."""

from __future__ import annotations

import fnmatch
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancord.agent.tools.globmatch import MAX_SEGMENTS, GlobPattern, GlobTooComplex


def _segment(pattern: str, name: str) -> bool:
    """One name against one segment; ``[!x]`` and ``[^x]`` negate, as fnmatch's ``[!x]``."""
    return fnmatch.fnmatchcase(name, pattern.replace("[^", "[!").replace("**", "*"))


def reference(pattern: list[str], path: list[str]) -> bool:
    """The documented semantics, by exhaustive recursion (exponential, for short inputs)."""
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        if not rest:
            return len(path) >= 1
        return any(reference(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and _segment(head, path[0]) and reference(rest, path[1:])


segments = st.sampled_from(["a", "b", "*", "?", "a*", "*b", "[ab]", "[!a]", "**", "x?y", "*.py"])
names = st.sampled_from(["a", "b", "ab", "ba", "c", "x.py", "xzy", "a.py", "b.py"])


@settings(max_examples=400, deadline=None)
@given(st.lists(segments, min_size=1, max_size=5), st.lists(names, min_size=1, max_size=5))
def test_the_matcher_agrees_with_the_definition(pattern: list[str], path: list[str]) -> None:
    collapsed: list[str] = []
    for part in pattern:
        if not (part == "**" and collapsed and collapsed[-1] == "**"):
            collapsed.append(part)
    expected = reference(collapsed, path)
    assert GlobPattern("/".join(pattern)).match("/".join(path)) is expected


@pytest.mark.parametrize(
    "pattern",
    ["**/" * 160 + "nomatch", "*a" * 200 + "b", "a*" * 120 + "?" * 100, "[a-z]*" * 80 + "!"],
)
def test_hostile_patterns_take_bounded_time(pattern: str) -> None:
    path = "/".join(["d" * 30] * 40 + ["a" * 200])
    compiled = GlobPattern(pattern)
    started = time.perf_counter()
    for _ in range(10):
        compiled.match(path)
    assert time.perf_counter() - started < 2.0


def test_too_many_segments_is_a_clear_error() -> None:
    with pytest.raises(GlobTooComplex, match=f"at most {MAX_SEGMENTS}"):
        GlobPattern("/".join(["a"] * (MAX_SEGMENTS + 1)))
