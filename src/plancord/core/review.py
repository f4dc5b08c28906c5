"""A second pair of eyes on a plan: the reviewer's findings, as values the edge can show.

A human approving on a phone reads the summary and the step titles. Before that, a separate
model call (``plancord.agent.plan_review``) reads the plan and what the agent explored and
answers with findings: a severity, the step concerned and a sentence or two. This module is
what that answer becomes once checked: ``Finding`` and ``PlanReview``, the compact line for
the plan message, the full review for the plan's attached markdown and the findings as Edit
feedback for the agent.

The reviewer reads agent-written text, so its answer is untrusted like the agent's own:
``core.review_answer`` keeps the valid findings of an answer and names the ones it drops
(never raising anything but ``ReviewAnswerInvalid``), and every rendering
for Discord goes through ``neutralise``, so a finding cannot mention anyone or leave the
quote it is shown in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from plancord.core.ports import ModelUsage

MAX_FINDINGS: Final = 20
MAX_FINDING_CHARS: Final = 400
"""About two sentences: a finding points at a problem, the plan and its diff hold the rest."""
MAX_STEP_NUMBER: Final = 50
REVIEW_UNAVAILABLE: Final = "Review unavailable"


class Severity(StrEnum):
    INFO = "info"
    CONCERN = "concern"
    BLOCKER = "blocker"


SEVERITY_MARK: Final = {Severity.INFO: "🔵", Severity.CONCERN: "🟠", Severity.BLOCKER: "⛔"}
_ORDER: Final = {Severity.BLOCKER: 0, Severity.CONCERN: 1, Severity.INFO: 2}


class ReviewAnswerInvalid(ValueError):
    """The reviewer's answer is not a usable review; ``problems`` names each fault."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(self.problems))


class Finding(BaseModel):
    """One thing the reviewer wants the approver to look at."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    severity: Severity
    step: int | None = Field(default=None, ge=1, le=MAX_STEP_NUMBER)
    """The step it concerns (1-based), or None for the plan as a whole."""
    text: str = Field(min_length=1, max_length=MAX_FINDING_CHARS)

    @field_validator("text", mode="before")
    @classmethod
    def _one_line(cls, value: Any) -> Any:
        return one_line(value) if isinstance(value, str) else value

    def where(self) -> str:
        return f"Step {self.step}" if self.step is not None else "Plan"


@dataclass(frozen=True, slots=True)
class PlanReview:
    """The review of one plan revision, or why there is none (``failure``).

    ``resolved`` holds the previous revision's findings this revision resolves, as the
    reviewer judged them. ``usage`` is what the call cost even when its answer was unusable:
    it belongs to the plan's cost line and budget either way.
    """

    model: str
    usage: ModelUsage = field(default_factory=ModelUsage)
    findings: tuple[Finding, ...] = ()
    resolved: tuple[Finding, ...] = ()
    failure: str | None = None
    dropped: tuple[str, ...] = ()
    """The parts of the reviewer's answer the host did not keep, each with why."""
    dropped_blockers: int = 0
    """Blockers among them: they count toward the acknowledgement all the same."""
    acknowledge_blockers: bool = False
    """Whether approving past its blockers needs a confirmation: decided when the review was
    made (``require_acknowledgement``) and kept with it, so every path that approves (the
    operator's, with or without the config file, included) asks for it."""

    @classmethod
    def unavailable(cls, reason: str, *, model: str, usage: ModelUsage | None = None) -> PlanReview:
        return cls(model=model, usage=usage or ModelUsage(), failure=reason)

    def to_data(self) -> dict[str, Any]:
        """A JSON-ready form, for the store (the review of a revision outlives a restart)."""
        return {
            "model": self.model,
            "usage": asdict(self.usage),
            "findings": [finding.model_dump(mode="json") for finding in self.findings],
            "resolved": [finding.model_dump(mode="json") for finding in self.resolved],
            "failure": self.failure,
            "dropped": list(self.dropped),
            "dropped_blockers": self.dropped_blockers,
            "acknowledge_blockers": self.acknowledge_blockers,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> PlanReview:
        """The review ``to_data`` wrote; ``ValueError`` when it is not one."""
        try:
            usage = ModelUsage(**{k: int(v) for k, v in dict(data.get("usage") or {}).items()})
            return cls(
                model=str(data["model"]),
                usage=usage,
                findings=tuple(Finding.model_validate(f) for f in data.get("findings") or ()),
                resolved=tuple(Finding.model_validate(f) for f in data.get("resolved") or ()),
                failure=None if data.get("failure") is None else str(data["failure"]),
                dropped=tuple(str(d) for d in data.get("dropped") or ()),
                dropped_blockers=int(data.get("dropped_blockers") or 0),
                acknowledge_blockers=data.get("acknowledge_blockers") is True,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a stored plan review: {exc}") from None

    @property
    def available(self) -> bool:
        return self.failure is None

    def count(self, severity: Severity) -> int:
        return sum(1 for finding in self.findings if finding.severity is severity)

    @property
    def blockers(self) -> int:
        """The blockers an approver overrides: those kept and those dropped as invalid."""
        return self.count(Severity.BLOCKER) + self.dropped_blockers

    def ordered(self) -> tuple[Finding, ...]:
        """Blockers first, then concerns, then notes; by step within a severity."""
        return tuple(
            sorted(
                self.findings,
                key=lambda f: (_ORDER[f.severity], f.step if f.step is not None else 0),
            )
        )

    def summary_line(self) -> str:
        """``Review: 1 blocker, 2 concerns`` · ``Review: no findings`` · ``Review unavailable``."""
        if not self.available:
            return REVIEW_UNAVAILABLE
        parts = [
            _counted(self.count(severity), severity.value)
            for severity in (Severity.BLOCKER, Severity.CONCERN, Severity.INFO)
            if self.count(severity)
        ]
        line = "Review: " + (", ".join(parts) if parts else "no findings")
        if self.dropped:
            line += f" · {len(self.dropped)} invalid {_plural(len(self.dropped), 'part')} dropped"
            if self.dropped_blockers:
                line += f" ({_counted(self.dropped_blockers, 'blocker')})"
        if self.resolved:
            line += (
                f" · {len(self.resolved)} earlier {_plural(len(self.resolved), 'finding')} resolved"
            )
        return line

    def acknowledgement(self) -> str | None:
        """The second click's words (``Approve despite 1 blocker``) when there are blockers."""
        if not self.blockers:
            return None
        return f"Approve despite {_counted(self.blockers, 'blocker')}"

    def findings_field(
        self, budget: int = 1024, *, step_link: Callable[[int], str | None] | None = None
    ) -> str:
        """The findings for an embed field: one quoted line each, worst first, within
        ``budget`` characters; what does not fit is counted and left to the attachment.
        ``step_link`` may give a URL for a step number (the plan message's own link)."""
        if not self.available:
            return f"> {neutralise(self.failure or 'the reviewer did not answer')}"[:budget]
        tail = self._dropped_line()
        room = budget - (len(tail) + 1 if tail else 0)
        lines: list[str] = [] if self.findings else ["> No findings."]
        ordered = self.ordered()
        for index, finding in enumerate(ordered):
            line = _field_line(finding, step_link)
            left = len(ordered) - index - 1
            reserve = len(f"\n… {left} more in the attached review") if left else 0
            if len("\n".join([*lines, line])) + reserve > room:
                lines.append(f"… {len(ordered) - index} more in the attached review")
                break
            lines.append(line)
        return "\n".join([*lines, *([tail] if tail else [])])[:budget]

    def _dropped_line(self) -> str:
        """One line naming what was dropped (the attachment lists each), or nothing."""
        if not self.dropped:
            return ""
        first = neutralise(self.dropped[0])[:200]
        more = f" and {len(self.dropped) - 1} more" if len(self.dropped) > 1 else ""
        return f"⚠️ Dropped as invalid: {first}{more}"

    def to_markdown(self, revision: int) -> str:
        """The full review for the plan's attached markdown; finding text quoted, defused."""
        out = [f"## Review of v{revision}", ""]
        if not self.available:
            out += [f"{REVIEW_UNAVAILABLE}: {neutralise(self.failure or '')}"]
            return "\n".join(out).rstrip() + "\n"
        out += [f"**{self.summary_line()}**", ""]
        for finding in self.ordered():
            out += [_markdown_line(SEVERITY_MARK[finding.severity], finding), ""]
        if self.resolved:
            out += ["", f"### Resolved since v{revision - 1}", ""]
            for finding in self.resolved:
                out += [_markdown_line("✅", finding), ""]
        if self.dropped:
            out += ["", "### Dropped as invalid", ""]
            out += [f"> ⚠️ {neutralise(item)}\n" for item in self.dropped]
        return "\n".join(out).rstrip() + "\n"

    def as_feedback(self, revision: int, max_chars: int = 4000) -> str:
        """The findings as the Edit feedback the agent receives: numbered, so the next
        revision's review can say which it resolves. Mentions are defused; markdown is left
        alone (the model reads it, and the edge quotes feedback as untrusted text anyway)."""
        head = f"The reviewer's findings on v{revision}; address each one or say why not:"
        lines = [head]
        for number, finding in enumerate(self.ordered(), start=1):
            line = f"{number}. [{finding.severity.value}] {finding.where()}: {defuse(finding.text)}"
            if len("\n".join([*lines, line])) > max_chars:
                break
            lines.append(line)
        return "\n".join(lines)[:max_chars]


# --- untrusted text ------------------------------------------------------------------------

_INVISIBLE: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_MARKDOWN: Final = re.compile(r"([\\*_~`|<>\[\]#])")
ZERO_WIDTH_SPACE: Final = "\u200b"


def one_line(text: str) -> str:
    """NFC, invisible and control characters dropped, every run of whitespace one space."""
    normal = unicodedata.normalize("NFC", text)
    kept = [
        " " if ch.isspace() else ch
        for ch in normal
        if ch.isspace() or unicodedata.category(ch) not in _INVISIBLE
    ]
    return " ".join("".join(kept).split())


def defuse(text: str) -> str:
    """``one_line`` with every ``@`` followed by a zero-width space, so no mention can form."""
    return one_line(text).replace("@", "@" + ZERO_WIDTH_SPACE)


def neutralise(text: str) -> str:
    """Untrusted text for one line of Discord markdown: one line, mentions defused, and every
    character that could open formatting, a link, a quote, a spoiler, code, an emoji or a
    mention escaped with a backslash, so it shows as written and cannot leave its quote."""
    return _MARKDOWN.sub(r"\\\1", defuse(text))


def _field_line(finding: Finding, step_link: Callable[[int], str | None] | None) -> str:
    where = finding.where()
    if finding.step is not None and step_link is not None:
        url = step_link(finding.step)
        if url:
            where = f"[{where}]({url})"
    line = f"> {SEVERITY_MARK[finding.severity]} **{where}** {neutralise(finding.text)}"
    return line if len(line) <= 600 else line[:599] + "…"


def _markdown_line(mark: str, finding: Finding) -> str:
    """One quote line; the untrusted text never starts a line, so it cannot be a heading,
    a list or a rule, and being one line it cannot end the quote."""
    return f"> {mark} **{finding.severity.value}** · {finding.where()}: {neutralise(finding.text)}"


def _plural(count: int, word: str) -> str:
    return word if count == 1 or word == "info" else word + "s"


def _counted(count: int, word: str) -> str:
    return f"{count} {_plural(count, word)}"
