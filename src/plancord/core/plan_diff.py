"""What changed between two revisions of a plan, for a reviewer reading on a phone.

A reviewer who asked for changes wants to see what changed, not to re-read the whole plan.
``diff_plans`` aligns the steps of two revisions (unchanged steps by their text, reworded
ones by similarity), and describes every step added, removed, reworded (word by word) or
whose risk or tools changed, and the changes to the summary and open questions.
``PlanDiff.to_markdown`` is the full diff (attached to the plan message);
``PlanDiff.to_discord`` is a compact version that fits a budget of characters, using
Discord's ~~strike~~ and **bold** for removed and added words.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Final

from plancord.core.plan import Plan, PlanStep, Risk
from plancord.core.planning import AuditAction, RevisionAuthor
from plancord.core.ports import PlanStore

_LINE_LIMIT: Final = 400
REWORDED_SIMILARITY: Final = 0.45
"""Two steps at least this similar (difflib's ratio over words) are one step reworded."""


class StepChangeKind(StrEnum):
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


@dataclass(frozen=True, slots=True)
class WordEdit:
    """A run of words: kept (``=``), removed (``-``) or added (``+``)."""

    op: str
    text: str


@dataclass(frozen=True, slots=True)
class StepChange:
    kind: StepChangeKind
    old_number: int | None
    new_number: int | None
    old: PlanStep | None
    new: PlanStep | None
    words: tuple[WordEdit, ...] = ()

    @property
    def reworded(self) -> bool:
        return any(edit.op != "=" for edit in self.words)

    @property
    def risk_changed(self) -> bool:
        return self.old is not None and self.new is not None and self.old.risk != self.new.risk

    @property
    def tools_changed(self) -> bool:
        return self.old is not None and self.new is not None and self.old.tools != self.new.tools

    @property
    def network_changed(self) -> bool:
        return (
            self.old is not None and self.new is not None and self.old.network != self.new.network
        )


@dataclass(frozen=True, slots=True)
class PlanDiff:
    from_revision: int
    to_revision: int
    summary: tuple[WordEdit, ...] = ()
    steps: tuple[StepChange, ...] = ()
    questions_added: tuple[str, ...] = ()
    questions_removed: tuple[str, ...] = ()
    notes_changed: bool = False
    unchanged_steps: int = 0
    feedback: str | None = field(default=None)
    authors: tuple[str, ...] = ()
    """Who wrote each revision after ``from_revision`` (``v2 by ana (direct edit)``)."""
    widens: tuple[str, ...] = ()
    """What the newer plan may do that the older could not: new files, new hosts, a higher
    risk (``widening``); shown first, so approvers see it before anything else."""

    @property
    def empty(self) -> bool:
        return not (
            any(e.op != "=" for e in self.summary)
            or self.steps
            or self.questions_added
            or self.questions_removed
            or self.notes_changed
        )

    def headline(self) -> str:
        """``2 steps added, 1 reworded, 1 removed`` or ``no changes``."""
        counts: dict[str, int] = {}
        for change in self.steps:
            if change.kind is StepChangeKind.CHANGED:
                key = "reworded" if change.reworded else "changed"
            else:
                key = change.kind.value
            counts[key] = counts.get(key, 0) + 1
        parts = [f"{n} step{'s' if n != 1 else ''} {what}" for what, n in counts.items()]
        if any(e.op != "=" for e in self.summary):
            parts.append("summary reworded")
        if self.questions_added or self.questions_removed:
            parts.append("questions changed")
        if self.notes_changed:
            parts.append("context notes changed")
        return ", ".join(parts) if parts else "no changes"

    def by_line(self) -> str:
        """``by ana (direct edit)``, or ``v2 by ana (direct edit), v3 by ada``."""
        if not self.authors:
            return ""
        if len(self.authors) == 1:
            return f"by {self.authors[0]}"
        first = self.to_revision - len(self.authors) + 1
        return ", ".join(f"v{first + i} by {who}" for i, who in enumerate(self.authors))

    def widens_line(self) -> str:
        return "⚠️ **Widens the plan:** " + "; ".join(self.widens) if self.widens else ""

    def to_markdown(self) -> str:
        lines = [f"# Changes from v{self.from_revision} to v{self.to_revision}", ""]
        if self.authors:
            lines += [f"Written {self.by_line()}.", ""]
        if self.widens:
            lines += [self.widens_line(), ""]
        if self.feedback:
            lines += [f"Feedback on v{self.from_revision}:", "", _quote_block(self.feedback), ""]
        lines += [f"**{self.headline()}**", ""]
        if any(e.op != "=" for e in self.summary):
            lines += [f"- Summary: {_marked(self.summary)}"]
        for change in self.steps:
            lines.append(f"- {_step_line(change)}")
            if change.kind is StepChangeKind.CHANGED and change.reworded:
                lines.append(f"  - {_marked(change.words)}")
        for question in self.questions_removed:
            lines.append(f"- Question removed: ~~{question}~~")
        for question in self.questions_added:
            lines.append(f"- Question added: **{question}**")
        if self.notes_changed:
            lines.append("- Context notes changed (see the plan)")
        if self.unchanged_steps:
            lines.append(f"- {self.unchanged_steps} step(s) unchanged")
        return "\n".join(lines).rstrip() + "\n"

    def to_discord(self, budget: int) -> str:
        """The changes in at most ``budget`` characters: a line per change, the last ones
        left to the attached file when they do not fit."""
        by = f" ({_one_line(self.by_line(), 200)})" if self.authors else ""
        lines = [f"**Changes since v{self.from_revision}{by}:** {self.headline()}"]
        if self.widens:
            lines.append(_one_line(self.widens_line(), _LINE_LIMIT))
        if self.feedback:
            lines.append(f"> {_one_line(self.feedback, 200)}")
        body: list[str] = []
        if any(e.op != "=" for e in self.summary):
            body.append(f"• Summary: {_marked(self.summary)}")
        for change in self.steps:
            line = f"• {_step_line(change)}"
            if change.kind is StepChangeKind.CHANGED and change.reworded:
                line += f": {_marked(change.words)}"
            body.append(line)
        body += [f"• Question removed: ~~{_one_line(q, 120)}~~" for q in self.questions_removed]
        body += [f"• Question added: **{_one_line(q, 120)}**" for q in self.questions_added]
        text = "\n".join(lines)
        for index, line in enumerate(body):
            line = _one_line(line, _LINE_LIMIT)
            after = len(body) - index - 1
            reserve = len(f"\n… {after} more in the attached diff") if after else 0
            if len(text) + 1 + len(line) + reserve > budget:
                text += f"\n… {len(body) - index} more in the attached diff"
                break
            text += "\n" + line
        return text[:budget]


def diff_plans(
    old: Plan, new: Plan, from_revision: int, to_revision: int, feedback: str | None = None
) -> PlanDiff:
    """The changes from ``old`` (revision ``from_revision``) to ``new``."""
    olds = [s.description for s in old.steps]
    news = [s.description for s in new.steps]
    changes: list[StepChange] = []
    unchanged = 0
    matcher = difflib.SequenceMatcher(a=olds, b=news, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                change = _changed(old.steps[i], new.steps[j], i + 1, j + 1)
                if change is None:
                    unchanged += 1
                else:
                    changes.append(change)
            continue
        changes += _pair(old.steps, new.steps, range(i1, i2), range(j1, j2))
    return PlanDiff(
        from_revision=from_revision,
        to_revision=to_revision,
        summary=tuple(word_diff(old.summary, new.summary)) if old.summary != new.summary else (),
        steps=tuple(changes),
        questions_added=tuple(q for q in _questions(new) if q not in _questions(old)),
        questions_removed=tuple(q for q in _questions(old) if q not in _questions(new)),
        notes_changed=old.context_notes != new.context_notes,
        unchanged_steps=unchanged,
        feedback=feedback or None,
    )


_RISK_ORDER: Final = {Risk.LOW: 0, Risk.MEDIUM: 1, Risk.HIGH: 2}


def widening(old: Plan, new: Plan) -> tuple[str, ...]:
    """What ``new`` may do that ``old`` did not: files and hosts no step of ``old`` named,
    and steps whose risk is higher than the step they replace (a new step: higher than any
    of ``old``'s)."""
    found: list[str] = []
    old_files = {f for s in old.steps for f in s.files}
    old_hosts = {h for s in old.steps for h in s.network}
    files = [f for f in dict.fromkeys(f for s in new.steps for f in s.files) if f not in old_files]
    named = dict.fromkeys(h for s in new.steps for h in s.network)
    hosts = [h for h in named if h not in old_hosts]
    if files:
        found.append("new files " + _tools(tuple(files[:5])) + (" …" if len(files) > 5 else ""))
    if hosts:
        found.append("new hosts " + _tools(tuple(hosts[:5])) + (" …" if len(hosts) > 5 else ""))
    highest = max(_RISK_ORDER[s.risk] for s in old.steps)
    for change in diff_plans(old, new, 0, 0).steps:
        if change.new is None:
            continue
        before = _RISK_ORDER[change.old.risk] if change.old is not None else highest
        if _RISK_ORDER[change.new.risk] > before:
            was = f" (was {change.old.risk.value})" if change.old is not None else ""
            found.append(f"step {change.new_number} {change.new.risk.value} risk{was}")
    return tuple(found)


def _changed(old: PlanStep, new: PlanStep, old_number: int, new_number: int) -> StepChange | None:
    if old == new:
        return None
    words = tuple(word_diff(old.description, new.description))
    return StepChange(StepChangeKind.CHANGED, old_number, new_number, old, new, words)


def _pair(
    olds: tuple[PlanStep, ...], news: tuple[PlanStep, ...], left: range, right: range
) -> list[StepChange]:
    """Match replaced steps by similarity: the most similar pairs are rewordings, the rest
    were removed or added. Ordered by the new plan, removed steps where they stood."""
    candidates = sorted(
        (
            (-_similarity(olds[i].description, news[j].description), i, j)
            for i in left
            for j in right
        ),
    )
    paired_old: dict[int, int] = {}
    paired_new: set[int] = set()
    for negative, i, j in candidates:
        if -negative < REWORDED_SIMILARITY:
            break
        if i in paired_old or j in paired_new:
            continue
        paired_old[i] = j
        paired_new.add(j)
    ordered: list[tuple[tuple[int, int], StepChange]] = []
    for i in left:
        if i in paired_old:
            continue
        before = [paired_old[k] for k in paired_old if k < i]
        where = max(before) + 1 if before else right.start
        ordered.append(
            ((where, -1), StepChange(StepChangeKind.REMOVED, i + 1, None, olds[i], None))
        )
    for j in right:
        match = next((i for i, jj in paired_old.items() if jj == j), None)
        if match is None:
            ordered.append(((j, 0), StepChange(StepChangeKind.ADDED, None, j + 1, None, news[j])))
            continue
        change = _changed(olds[match], news[j], match + 1, j + 1)
        if change is not None:
            ordered.append(((j, 0), change))
    return [change for _, change in sorted(ordered, key=lambda item: item[0])]


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(a=a.split(), b=b.split(), autojunk=False).ratio()


def word_diff(old: str, new: str) -> list[WordEdit]:
    """Word-level edits turning ``old`` into ``new``, adjacent runs merged."""
    a, b = old.split(), new.split()
    edits: list[WordEdit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            edits.append(WordEdit("=", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            edits.append(WordEdit("-", " ".join(a[i1:i2])))
        if j2 > j1:
            edits.append(WordEdit("+", " ".join(b[j1:j2])))
    return edits


def _marked(edits: tuple[WordEdit, ...] | list[WordEdit]) -> str:
    marks = {"=": "{}", "-": "~~{}~~", "+": "**{}**"}
    return " ".join((_keep(e.text) if e.op == "=" else marks[e.op].format(e.text)) for e in edits)


def _keep(text: str, limit: int = 60) -> str:
    """Unchanged words between edits, shortened in the middle when long."""
    if len(text) <= limit:
        return text
    return text[: limit // 2].rstrip() + " … " + text[-limit // 2 :].lstrip()


def _step_line(change: StepChange) -> str:
    if change.kind is StepChangeKind.ADDED:
        assert change.new is not None
        return f"Step {change.new_number} added: **{_one_line(change.new.description, 160)}**"
    if change.kind is StepChangeKind.REMOVED:
        assert change.old is not None
        return f"Step {change.old_number} removed: ~~{_one_line(change.old.description, 160)}~~"
    assert change.old is not None
    assert change.new is not None
    moved = (
        f"Step {change.old_number} → {change.new_number}"
        if change.old_number != change.new_number
        else f"Step {change.new_number}"
    )
    notes = []
    if change.reworded:
        notes.append("reworded")
    if change.risk_changed:
        notes.append(f"risk {change.old.risk.value} → {change.new.risk.value}")
    if change.tools_changed:
        notes.append("tools " + _tools(change.old.tools) + " → " + _tools(change.new.tools))
    if change.network_changed:
        old, new = change.old.network, change.new.network
        notes.append("network " + _tools(old) + " → " + _tools(new))
    return f"{moved} " + ", ".join(notes)


def _tools(tools: tuple[str, ...]) -> str:
    return ", ".join(f"`{t}`" for t in tools) if tools else "none"


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _quote_block(text: str) -> str:
    return "\n".join(f"> {line}" for line in text.splitlines() or [""])


async def revision_changes(
    store: PlanStore, plan_id: str, first: int, second: int
) -> PlanDiff | None:
    """The diff between two stored revisions of one plan, with the feedback that asked for
    the second when it directly follows the first; None when either does not exist."""
    if first < 1 or first >= second:
        return None
    old = await store.get_revision(plan_id, first)
    new = await store.get_revision(plan_id, second)
    if old is None or new is None:
        return None
    feedback = None
    if second == first + 1:
        decision = await store.find_decision(plan_id, first)
        if decision is not None and decision.action is AuditAction.CHANGES_REQUESTED:
            value = decision.detail.get("feedback")
            feedback = value if isinstance(value, str) else None
    between = [await store.get_revision(plan_id, n) for n in range(first + 1, second)]
    written = [r for r in (*between, new) if r is not None]
    diff = diff_plans(old.plan, new.plan, first, second, feedback)
    if not any(r.author is RevisionAuthor.HUMAN_EDIT for r in written):
        return diff  # the agent wrote every revision: the diff reads as it always did
    return replace(
        diff,
        authors=tuple(r.author_name for r in written),
        widens=widening(old.plan, new.plan),
    )


def _questions(plan: Plan) -> list[str]:
    """Each question as the diff shows it: with its choices, so new choices are a change."""
    return [
        f"{question} [{' / '.join(plan.choices_for(index))}]"
        if plan.choices_for(index)
        else question
        for index, question in enumerate(plan.questions)
    ]
