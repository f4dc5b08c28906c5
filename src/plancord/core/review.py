"""A second pair of eyes on a plan: the reviewer's findings, as values the edge can show.

A human approving on a phone reads the summary and the step titles. Before that, a separate
model call (``plancord.agent.plan_review``) reads the plan and what the agent explored and
answers with findings: a severity, the step concerned and a sentence or two. This module is
what that answer becomes once checked: ``Finding`` and ``PlanReview``, the compact line for
the plan message, the full review for the plan's attached markdown and the findings as Edit
feedback for the agent.

The reviewer reads agent-written text, so its answer is untrusted like the agent's own:
``parse_review_answer`` turns anything that is not a well-formed answer into
``ReviewAnswerInvalid`` naming every problem (never another exception), and every rendering
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
        return self.count(Severity.BLOCKER)

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
        if not self.findings:
            return "> No findings."
        lines: list[str] = []
        ordered = self.ordered()
        for index, finding in enumerate(ordered):
            line = _field_line(finding, step_link)
            left = len(ordered) - index - 1
            reserve = len(f"\n… {left} more in the attached review") if left else 0
            if len("\n".join([*lines, line])) + reserve > budget:
                lines.append(f"… {len(ordered) - index} more in the attached review")
                break
            lines.append(line)
        return "\n".join(lines)[:budget]

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


def parse_review_answer(
    data: object, *, steps: int, previous: Sequence[Finding] = ()
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """The findings and the resolved earlier findings of a reviewer's tool input.

    ``steps`` is the number of steps of the reviewed plan; ``previous`` the findings of the
    previous revision's review in the order they were numbered for the reviewer (``ordered``),
    which ``resolved`` refers to by number. Anything else is ``ReviewAnswerInvalid``.
    """
    if not isinstance(data, Mapping):
        raise ReviewAnswerInvalid(["the answer must be an object with findings and resolved"])
    problems: list[str] = []
    extra = sorted(str(key) for key in data if key not in ("findings", "resolved"))
    if extra:
        problems.append(f"unknown field(s): {', '.join(extra)[:100]}")
    raw = data.get("findings")
    findings: list[Finding] = []
    if not isinstance(raw, list):
        problems.append("findings: must be a list")
    elif len(raw) > MAX_FINDINGS:
        problems.append(f"findings: {len(raw)} given, at most {MAX_FINDINGS}")
    else:
        for index, item in enumerate(raw):
            finding = _finding(item, f"findings[{index}]", steps, problems)
            if finding is not None:
                findings.append(finding)
    resolved = _resolved(data.get("resolved", []), previous, problems)
    if problems:
        raise ReviewAnswerInvalid(problems)
    return tuple(findings), resolved


def _finding(item: object, where: str, steps: int, problems: list[str]) -> Finding | None:
    if not isinstance(item, Mapping):
        problems.append(f"{where}: must be an object with severity, step and text")
        return None
    before = len(problems)
    extra = sorted(str(key) for key in item if key not in ("severity", "step", "text"))
    if extra:
        problems.append(f"{where}: unknown field(s): {', '.join(extra)[:100]}")
    severity = item.get("severity")
    if not isinstance(severity, str) or severity not in {s.value for s in Severity}:
        problems.append(f"{where}.severity: must be info, concern or blocker")
    step = item.get("step")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        problems.append(f"{where}.step: must be a step number or null")
    elif step is not None and not 1 <= step <= steps:
        problems.append(f"{where}.step: the plan has no step {step} (it has 1 to {steps})")
    text = item.get("text")
    if not isinstance(text, str):
        problems.append(f"{where}.text: must be text")
    else:
        text = one_line(text)
        if not text:
            problems.append(f"{where}.text: must not be empty")
        elif len(text) > MAX_FINDING_CHARS:
            problems.append(f"{where}.text: {len(text)} characters, at most {MAX_FINDING_CHARS}")
    if len(problems) > before:
        return None
    return Finding(severity=Severity(str(severity)), step=step, text=str(text))


def _resolved(raw: object, previous: Sequence[Finding], problems: list[str]) -> tuple[Finding, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.append("resolved: must be a list of finding numbers")
        return ()
    picked: list[Finding] = []
    seen: set[int] = set()
    for index, number in enumerate(raw[: MAX_FINDINGS + 1]):
        if isinstance(number, bool) or not isinstance(number, int):
            problems.append(f"resolved[{index}]: must be a finding number")
        elif not 1 <= number <= len(previous):
            known = f"1 to {len(previous)}" if previous else "none: there was no earlier review"
            problems.append(f"resolved[{index}]: no earlier finding {number} ({known})")
        elif number not in seen:
            seen.add(number)
            picked.append(previous[number - 1])
    if len(raw) > MAX_FINDINGS:
        problems.append(f"resolved: {len(raw)} given, at most {MAX_FINDINGS}")
    return tuple(picked)


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


def review_input_schema() -> dict[str, Any]:
    """The JSON schema of the reviewer's one tool, matching what ``parse_review_answer``
    accepts (the parse still checks everything: a schema guides the model, it binds nothing)."""
    return {
        "type": "object",
        "properties": {
            "findings": {
                "type": "array",
                "maxItems": MAX_FINDINGS,
                "items": {
                    "type": "object",
                    "properties": {
                        "severity": {"type": "string", "enum": [s.value for s in Severity]},
                        "step": {
                            "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                            "description": "The step number it concerns; null for the plan.",
                        },
                        "text": {"type": "string", "maxLength": MAX_FINDING_CHARS},
                    },
                    "required": ["severity", "step", "text"],
                    "additionalProperties": False,
                },
            },
            "resolved": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "description": "Numbers of the previous review's findings this revision resolves.",
            },
        },
        "required": ["findings", "resolved"],
        "additionalProperties": False,
    }
