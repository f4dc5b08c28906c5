"""What an answer to an ask is: a reported choice read against the ask it answers, the
value its waiter gets, and that value kept as JSON for a waiter in another process.

A permission request, a drift ask or a network ask takes ``allow`` or ``deny``; a
checkpoint ``continue`` or ``stop`` (the acts of its subject, ``core.authority.ACTS``); a
question one of the agent's choices (its text or its number) or an answer in words. The
waiter of a permission gets the authority's ``Decision``; the waiter of a question the
answer as the model reads it, with who gave it and when.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.asks.records import OpenAsk
from plancord.core.authority import ACTS, Act, Decision, Subject
from plancord.core.choices import stamp
from plancord.core.planning import Actor

ASKED = (Subject.PERMISSION, Subject.DRIFT, Subject.CHECKPOINT)


def subject_of(payload: dict[str, Any]) -> Subject:
    """What a stored request asks about (a permission, for a row from before it was kept)."""
    subject = payload.get("subject")
    return next((s for s in ASKED if s.value == subject), Subject.PERMISSION)


def labels_of(payload: dict[str, Any]) -> tuple[str, str]:
    """The two buttons' words the request asked for (Allow and Deny unless it said)."""
    labels = payload.get("labels")
    if isinstance(labels, list) and len(labels) == 2 and all(isinstance(x, str) for x in labels):
        return labels[0], labels[1]
    return "Allow", "Deny"


def choices_of(payload: dict[str, Any]) -> tuple[str, ...]:
    """The choices a stored question offered (none when it offered none or the row is odd)."""
    raw = payload.get("choices")
    if isinstance(raw, list) and all(isinstance(c, str) for c in raw):
        return tuple(raw)
    return ()


def for_model(verb: str, answer: str, who: str, when: datetime) -> str:
    """An answer to a question as the tool hands it to the model: what, who and when."""
    how = "picked from your choices by" if verb == "chose" else "answered by"
    return f"{answer}\n({how} {who} at {stamp(when)})"


@dataclass(frozen=True, slots=True)
class Choice:
    """A reported answer read against its ask: the act the authority judges and, for a
    question, the answer (``verb``: chose or answered; ``index`` of a picked choice)."""

    subject: Subject
    act: Act
    text: str = ""
    verb: str = ""
    index: int | None = None

    def outcome(self, ask: OpenAsk, who: str) -> str:
        """How the ask ended, in words, ``who`` naming the one who answered."""
        if self.subject is Subject.QUESTION:
            return f"{who} {self.verb} {self.text[:100]}"
        allow = self.act is ACTS[self.subject][0]
        word = labels_of(ask.payload)[0 if allow else 1]
        if word in ("Allow", "Deny"):
            return f"{'Allowed' if allow else 'Denied'} by {who}"
        return f"{word} — chosen by {who}"


def read_choice(ask: OpenAsk, choice: str) -> Choice | str:
    """``choice`` as an answer to ``ask``; else what it should have been."""
    if ask.kind == "question":
        text = choice.strip()
        if not text:
            return "an empty answer answers nothing; the question is open"
        offered = choices_of(ask.payload)
        index = next((i for i, c in enumerate(offered) if c.casefold() == text.casefold()), None)
        if index is None and text.isdigit() and 1 <= int(text) <= len(offered):
            index = int(text) - 1
        if index is not None:
            return Choice(Subject.QUESTION, Act.ANSWER, offered[index], "chose", index)
        return Choice(Subject.QUESTION, Act.ANSWER, text, "answered")
    subject = subject_of(ask.payload)
    acts = ACTS[subject]
    act = next((a for a in acts if a.value == choice.strip().casefold()), None)
    if act is None:
        return f"this {subject.value} ask takes {' or '.join(a.value for a in acts)}"
    return Choice(subject, act)


def encode(value: Any) -> dict[str, Any]:
    """A waiter's value as kept in the ask's row."""
    if isinstance(value, Decision):
        return {
            "subject": value.subject.value,
            "act": value.act.value,
            "actor": value.actor.model_dump(mode="json"),
        }
    return {"text": str(value)}


def decode(kept: dict[str, Any]) -> Any:
    """The waiter's value from the ask's row (``encode``)."""
    if "act" in kept:
        return Decision(
            Subject(kept["subject"]), Act(kept["act"]), Actor.model_validate(kept["actor"])
        )
    return str(kept.get("text", ""))
