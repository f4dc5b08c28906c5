"""Execution held to the approved plan: is a mutating call within what some step declared?

A step may declare the tools it uses and, optionally, the files it changes (paths or globs:
``src/*.py``, ``docs/``, ``**/*.md``). While a plan executes, a mutating call is *in scope*
when some step declares its tool and, if that step names files, every path the call touches
matches one of them. Anything else is **drift**; the plan-mode knob ``drift`` decides whether
drift asks a human (the default), is refused (the agent is told to propose an amendment) or
is only logged. A plan whose steps declare no tools at all puts no limit on tools.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache

from plancord.core.plan import Plan


class DriftPolicy(StrEnum):
    ASK = "ask"
    REFUSE = "refuse"
    LOG = "log"


def drift(plan: Plan, tool: str, paths: Sequence[str]) -> str | None:
    """Why a call of ``tool`` on ``paths`` is outside ``plan``, or None when it is within."""
    if not any(step.tools for step in plan.steps):
        return None
    steps = [step for step in plan.steps if tool in step.tools]
    if not steps:
        return f"no step of the approved plan uses `{tool}`"
    wanted = [_normal(path) for path in paths]
    if not wanted:
        return None
    for step in steps:
        if not step.files:
            return None
        if all(any(_matches(pattern, path) for pattern in step.files) for path in wanted):
            return None
    shown = ", ".join(f"`{path}`" for path in wanted[:3])
    return f"{shown} is not among the files the plan's `{tool}` steps name"


def matches_files(patterns: Sequence[str], path: str) -> bool:
    """Whether workspace path ``path`` is one a step naming ``patterns`` may change."""
    wanted = _normal(path)
    return any(_matches(pattern, wanted) for pattern in patterns)


def _normal(path: str) -> str:
    return posixpath.normpath(path.strip()).lstrip("/") if path.strip() else "."


def _matches(pattern: str, path: str) -> bool:
    if pattern.endswith("/"):
        return path == pattern.rstrip("/") or path.startswith(pattern)
    return _compiled(_normal(pattern)).fullmatch(path) is not None


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A glob as a regex: ``**`` crosses directories, ``*`` and ``?`` do not. Patterns hold
    at most a few wildcards (the plan validates that), which bounds the matching."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)
