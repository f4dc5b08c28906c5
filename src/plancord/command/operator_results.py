"""An executed plan's result from a shell: shown as text, merged or discarded by an operator.

Why this exists: after an execution ends its result waits for Merge or Discard on the
completion card, and no other plan of the agent can be approved until then. An admin away
from Discord (or a script) must be able to see that result and decide it. The decision goes
through the same ``ExecutionResults`` the card's buttons call, so the version check, the
approver policy (the operator may decide), git's work on the branch and the audit row are
the buttons' own; the actor is ``operator``. The text shows what the card shows: per step
its outcome, the files with lines added and removed, the commands run, the drift events and
how each was decided, the result review's verdict and the branch's newest commit.

A running bot is another process: its card shows the decision when the bot next redraws it
(a click on it, a restart); a click on the old buttons is refused and redraws the card.
"""

from __future__ import annotations

from typing import Any

from plancord.command.operator import OperatorError, OperatorServices
from plancord.core.execution import ExecutionRecord, ResultState
from plancord.core.permissions import spoken_action
from plancord.core.planning import Actor
from plancord.core.results import (
    ResultSummary,
    StepResult,
    drift_decided,
    lines_changed,
    step_label,
)

OPERATOR = Actor.operator()

_STATES = {
    ResultState.WAITING: "waiting for a decision",
    ResultState.MERGED: "merged",
    ResultState.DISCARDED: "discarded",
}


async def waiting_result(services: OperatorServices, agent: str) -> ExecutionRecord | None:
    """The agent's result waiting for Merge or Discard, if any; ``AgentNotFound`` when there
    is no such agent."""
    await services.store.get_agent(agent)
    return await services.results.waiting(agent)


async def result_summary(services: OperatorServices, agent: str) -> ResultSummary:
    """What the completion card of the agent's waiting result (else its newest) shows."""
    record = await waiting_result(services, agent) or await services.results.latest(agent)
    if record is None:
        raise OperatorError(f"agent {agent} has no executed plan with a result")
    summary = await services.results.summary(record.plan_id)
    if summary is None:
        raise OperatorError(f"agent {agent} has no executed plan with a result")
    return summary


async def _decidable(services: OperatorServices, agent: str, verb: str) -> ExecutionRecord:
    record = await waiting_result(services, agent)
    if record is None:
        raise OperatorError(
            f"agent {agent} has no result waiting for a decision; nothing to {verb} "
            f"(plancord plan result --agent {agent} shows its newest)"
        )
    return record


async def result_merge(services: OperatorServices, agent: str) -> str:
    """Merge the agent's waiting result as ``operator`` (the card's Merge)."""
    record = await _decidable(services, agent, "merge")
    said = await services.results.merge(record.plan_id, record.result_version, OPERATOR)
    return f"{_plain(said)}\naudited as operator"


async def result_discard(services: OperatorServices, agent: str) -> str:
    """Discard the agent's waiting result as ``operator`` (the card's Discard)."""
    record = await _decidable(services, agent, "discard")
    said = await services.results.discard(record.plan_id, record.result_version, OPERATOR)
    return f"{_plain(said)}\naudited as operator"


def _plain(text: str) -> str:
    return text.replace("`", "")


def waiting_line(record: ExecutionRecord) -> str:
    """The line ``plancord plan status`` adds for a result waiting for a decision."""
    return (
        f"result waiting for a decision: plan v{record.revision} ran on {record.branch}; "
        f"no other plan can be approved until it is merged or discarded "
        f"(plancord plan result --agent {record.agent})"
    )


def waiting_json(record: ExecutionRecord | None) -> dict[str, Any] | None:
    if record is None:
        return None
    return {
        "plan_id": record.plan_id,
        "revision": record.revision,
        "branch": record.branch,
        "base": record.base,
        "version": record.result_version,
        "ended_at": record.ended_at.isoformat() if record.ended_at else None,
    }


def result_text(summary: ResultSummary) -> str:
    """The completion card as plain text, all of it (no Discord limits here)."""
    record = summary.record
    state = _STATES.get(record.result or ResultState.WAITING, "waiting for a decision")
    lines = [
        f"result of agent {record.agent}: {summary.summary}",
        f"plan v{record.revision} · {record.plan_id} · branch {record.branch} onto {record.base}",
        f"state: {state}",
    ]
    if record.result is not ResultState.WAITING and record.decided_by_name:
        lines.append(f"decided by {record.decided_by_name}: {_plain(record.outcome or '')}")
    if summary.head is not None:
        lines.append(f"commit: {summary.head}")
    if summary.branch_moved_to is not None and record.waiting:
        lines.append(
            f"the branch moved since (now at {summary.branch_moved_to}): the later commits "
            "are not part of the result; merge and push take the commit above"
        )
    if record.end_reason:
        lines.append(f"execution ended: {record.end_reason}")
    if record.requested_by_name:
        lines.append(f"requested by: {record.requested_by_name}")
    if summary.needed > 1 and record.waiting:
        names = ", ".join(summary.votes) or "none yet"
        lines.append(f"merge votes: {len(summary.votes)} of {summary.needed} ({names})")
    if summary.review is not None:
        lines.append("result r" + summary.review.summary_line()[1:])
        lines.extend(f"  {line}" for line in summary.review.findings_field(1_000_000).splitlines())
    if summary.push_remote is not None and record.waiting:
        lines.append(f"push remote: {summary.push_remote}")
    if summary.before_plan:
        lines += ["", "already in the workspace before the plan (merge brings it too):"]
        lines += [f"   {f.path} {lines_changed(f.added, f.removed)}" for f in summary.before_plan]
    if summary.unlisted:
        lines += ["", "in the result, in no step (merge brings it too):"]
        lines += [f"   {f.path} {lines_changed(f.added, f.removed)}" for f in summary.unlisted]
    for step in summary.steps:
        lines.append("")
        lines.extend(_step_lines(step))
    if record.waiting:
        lines += [
            "",
            f"merge:   plancord plan merge --agent {record.agent}",
            f"discard: plancord plan discard --agent {record.agent}",
            f"diff:    plancord plan result-diff --agent {record.agent}",
        ]
    return "\n".join(lines)


def _step_lines(step: StepResult) -> list[str]:
    lines = [f"{step.number}. {step.title or 'step'}: {step_label(step)}"]
    lines += [f"   {f.path} {lines_changed(f.added, f.removed)}" for f in step.files]
    lines += [f"   {path} (ignored by git, in no commit)" for path in step.ignored]
    lines += [f"   {spoken_action(command)}" for command in step.commands]
    lines += [f"   network: {host.text()}" for host in step.hosts]
    lines += [
        f"   {'checkpoint' if d.checkpoint else 'drift'}: {d.what} ({drift_decided(d)})"
        for d in step.drift
    ]
    return lines
