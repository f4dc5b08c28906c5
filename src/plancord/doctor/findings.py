"""What one ``plancord doctor`` check found: ok, warn or FAIL, what is wrong and the fix.

Every check module builds its findings with the same three constructors, so every line the
doctor prints has one shape an operator (or a health check's log) can read.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Check", "Status", "failed", "passed", "warned"]


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "FAIL"


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, and for warn/FAIL what is wrong and how to fix it."""

    status: Status
    what: str
    problem: str = ""
    fix: str = ""

    def line(self) -> str:
        if self.status is Status.OK:
            return f"ok  {self.what}"
        text = f"{self.status.value} {self.what}: {self.problem}"
        return f"{text} — {self.fix}" if self.fix else text


def passed(what: str) -> Check:
    return Check(Status.OK, what)


def warned(what: str, problem: str, fix: str) -> Check:
    return Check(Status.WARN, what, problem, fix)


def failed(what: str, problem: str, fix: str) -> Check:
    return Check(Status.FAIL, what, problem, fix)
