"""A test's scripted answer to a permission request (True allows, False denies, None lets it
time out), as the ``Notifier`` port answers it."""

from __future__ import annotations

from plancord.core.authority import Answer


def answer_of(scripted: bool | None) -> Answer:
    if scripted is None:
        return Answer.TIMED_OUT
    return Answer.ALLOWED if scripted else Answer.DENIED
