"""What drift is decided by, and which paths a step's ``files`` name.

A step may declare the tools it uses and, optionally, the files it changes (paths or globs:
``src/*.py``, ``docs/``, ``**/*.md``). Whether a call is within the current step is judged
in ``core.holding`` from the paths the host observed it change; this module holds the two
things that judgement shares with the settings: the plan-mode knob ``drift`` (ask a human,
the default; refuse and restore; or only log) and the glob matching of ``files``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from enum import StrEnum
from functools import lru_cache


class DriftPolicy(StrEnum):
    ASK = "ask"
    REFUSE = "refuse"
    LOG = "log"


def matches_files(patterns: Sequence[str], path: str) -> bool:
    """Whether workspace path ``path`` is one a step naming ``patterns`` may change. An
    absolute pattern names a directory shared with agents, never a workspace path."""
    wanted = _normal(path)
    return any(_matches(p, wanted) for p in patterns if not p.strip().startswith("/"))


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
