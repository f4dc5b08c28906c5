"""How an ask's answer decides a drift or a checkpoint, as the execution records it.

Why this exists: a permission request ends with an ``Answer`` (``core.authority``); the
host records drift and checkpoints as a ``DriftDecision``, the values its records keep. The
mapping between them is made once, here.
"""

from __future__ import annotations

from collections.abc import Mapping

from plancord.core.authority import Answer
from plancord.core.execution import DriftDecision

_ANSWERED: Mapping[Answer, DriftDecision] = {
    Answer.ALLOWED: DriftDecision.ALLOWED,
    Answer.DENIED: DriftDecision.DENIED,
    Answer.TIMED_OUT: DriftDecision.TIMED_OUT,
    Answer.NOT_SHOWN: DriftDecision.STOPPED,
}


def answered(answer: Answer) -> DriftDecision:
    """How an ask's answer decided a drift (or a checkpoint), as the execution records it."""
    return _ANSWERED[answer]
