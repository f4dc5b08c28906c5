"""What the agent awaits when it asks a human: ``ask_permission`` and ``ask_user`` on the
core's ``AskService``, never on a front end.

A permission request (a call the profile holds, a drift, a network host, a 🔴 step's
checkpoint) is kept, shown through the front end, waited on and audited here: allowed or
denied with who decided, timed out, or not shown (``CardNotShown``, raised with Discord's
or any front end's reason so the model hears it instead of "nobody answered"). A question
is kept, shown and waited on the same way; nobody answering is None.

``AskingNotifier`` is the agent's ``Notifier``: a front end's lines (``FrontEnd``) with the
asks answered here.
"""

from __future__ import annotations

from typing import Any

from plancord.core.asks.choices import subject_of
from plancord.core.asks.records import OpenAsk
from plancord.core.asks.service import AskService, Unanswered
from plancord.core.authority import Answer, Decision
from plancord.core.errors import CardNotShown
from plancord.core.planning import Actor, AuditAction
from plancord.core.ports import FrontEnd, PermissionRequest, PlanningChange, Question


async def ask_permission(asks: AskService, request: PermissionRequest) -> Answer:
    """Allowed, denied, or timed out (nobody decided in time). Raises ``CardNotShown``
    (audited with its reason) when the card could not be shown: nothing runs."""
    payload = {
        "action": request.action,
        "tool_name": request.tool_name,
        "summary": request.summary,
        "requested_by": request.requested_by,
        "timeout_seconds": request.timeout_seconds,
        "outside_plan": request.outside_plan,
        "labels": list(request.labels),
        "subject": request.subject.value,
        "deciders": await asks.authority.deciders(request.agent),
        "remember": request.remember.to_json() if request.remember else None,
        "applies": request.applies,
    }
    ask = await asks.open(
        "permission", request.agent, request.requested_by, payload, request.timeout_seconds
    )
    try:
        await asks.show(ask)
    except CardNotShown as exc:
        await _audit(asks, ask, Actor.policy("discord"), Answer.NOT_SHOWN.audit_action, str(exc))
        raise
    decision: Decision | CardNotShown | Unanswered = await asks.wait(
        ask.id, request.timeout_seconds
    )
    if isinstance(decision, Unanswered):
        actor = Actor.policy("permission_timeout")
        await _audit(asks, ask, actor, Answer.TIMED_OUT.audit_action)
        return Answer.TIMED_OUT
    if isinstance(decision, CardNotShown):
        # Deleted, and the front end could not show it again.
        await _audit(
            asks, ask, Actor.policy("discord"), Answer.NOT_SHOWN.audit_action, str(decision)
        )
        raise decision
    await _audit(asks, ask, decision.actor, decision.answer.audit_action)
    return decision.answer


async def ask_user(asks: AskService, question: Question) -> str | None:
    """The human's answer (with who gave it and when), or None when nobody answered in
    time or the question could not be shown."""
    payload: dict[str, Any] = {"text": question.text, "requested_by": question.requested_by}
    if question.choices:
        payload["choices"] = list(question.choices)
    ask = await asks.open(
        "question", question.agent, question.requested_by, payload, question.timeout_seconds
    )
    try:
        await asks.show(ask)
    except CardNotShown:
        return None
    answer: str | Unanswered = await asks.wait(ask.id, question.timeout_seconds)
    return None if isinstance(answer, Unanswered) else answer


async def _audit(
    asks: AskService,
    ask: OpenAsk,
    actor: Actor,
    action: AuditAction,
    reason: str | None = None,
) -> None:
    detail = {"ask_id": ask.id, "action": ask.payload.get("action")}
    await asks.authority.record(
        action, actor, ask.agent, detail, subject=subject_of(ask.payload), reason=reason
    )


class AskingNotifier:
    """The agent's ``Notifier``: ``front_end`` shows its lines, the core answers its asks."""

    def __init__(self, front_end: FrontEnd, asks: AskService) -> None:
        self.front_end = front_end
        self.asks = asks

    async def planning_changed(self, change: PlanningChange) -> None:
        await self.front_end.planning_changed(change)

    async def say(self, agent: str, text: str) -> None:
        await self.front_end.say(agent, text)

    async def activity(self, agent: str, line: str) -> None:
        await self.front_end.activity(agent, line)

    async def progress_line(self, agent: str, key: str, line: str, *, final: bool = False) -> None:
        await self.front_end.progress_line(agent, key, line, final=final)

    async def ask_user(self, question: Question) -> str | None:
        return await ask_user(self.asks, question)

    async def ask_permission(self, request: PermissionRequest) -> Answer:
        return await ask_permission(self.asks, request)
