"""Answers a human can pick with one tap: the rules every list of choices keeps, whether an
``ask_user`` question or a plan's open question carries it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

MIN_CHOICES = 2
MAX_CHOICES = 25
MAX_CHOICE_CHARS = 80
"""Discord's limit for a button's label (a select option allows 100)."""


def clean_choices(values: Iterable[str]) -> tuple[str, ...]:
    """The choices on one line each, or ``ValueError`` saying what to fix: 2 to 25, none
    blank or over 80 characters, no two the same ignoring case."""
    cleaned = tuple(" ".join(str(choice).split()) for choice in values)
    if not MIN_CHOICES <= len(cleaned) <= MAX_CHOICES:
        raise ValueError(f"give {MIN_CHOICES} to {MAX_CHOICES} choices, or none")
    for choice in cleaned:
        if not choice:
            raise ValueError("a choice may not be blank")
        if len(choice) > MAX_CHOICE_CHARS:
            raise ValueError(
                f"each choice must be at most {MAX_CHOICE_CHARS} characters: {choice[:40]}…"
            )
    if len({c.casefold() for c in cleaned}) != len(cleaned):
        raise ValueError("the choices must differ from each other")
    return cleaned


def stamp(when: datetime) -> str:
    """When an answer was given, as the agent reads it: ``2026-11-25 14:03 UTC``."""
    return when.strftime("%Y-%m-%d %H:%M UTC")
