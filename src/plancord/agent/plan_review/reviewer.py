"""The reviewer's model call: its findings asked for the way the model takes
(``answer_ways``), one bounded retry, and a ``PlanReview`` whatever happens.

A review is advice for the approver, so it must never be the reason a plan is stuck or a
turn fails. An answer that holds no usable review (no answer, not JSON, no findings list, or
cut off at ``max_tokens``) is asked for once more, the retry saying what was wrong (a cut-off
one with a larger ``max_tokens``, as the docs advise: "Retry with a higher ``max_tokens``
value to get the complete structured output"); a second such answer, an outage, a timeout
or a refusal become an unavailable review carrying the reason (logged) and whatever the
calls cost: what the API reported, or, for a call that timed out or failed without a reply,
its request's estimated input tokens, so a failing reviewer still counts toward the plan's
budget. Both calls share the one ``timeout_seconds``, so a review is settled within the
window approval waits for (``core.review_gate.settle_window``).
Whether an unavailable review blocks approval is the operator's choice
(``plan_mode.review.require_review``), decided where approval is decided.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Final

from plancord.agent.context import estimate_tokens
from plancord.agent.plan_review.answer_ways import (
    AnswerWay,
    answer_way,
    read_answer,
    request_shape,
)
from plancord.agent.plan_review.prompt import (
    RESULT_REVIEWER_SYSTEM_PROMPT,
    REVIEWER_SYSTEM_PROMPT,
    result_message,
    retry_note,
    review_message,
    system_prompt,
)
from plancord.core.plan import Plan
from plancord.core.plan_diff import PlanDiff
from plancord.core.ports import ModelClient, ModelReply, ModelRequest, ModelUsage
from plancord.core.review import Finding, PlanReview, ReviewAnswerInvalid
from plancord.core.review_answer import parse_review_answer
from plancord.core.settings import ReviewMode, ReviewSettings
from plancord.llm.models import ModelCapabilities, bounded_max_tokens, capabilities_of

REVIEW_MAX_TOKENS: Final = 4096
"""Room for the answer itself."""
REVIEW_THINKING_MAX_TOKENS: Final = 16_000
"""Room for the answer and the thinking before it, on a model that thinks by default (its
thinking counts toward ``max_tokens``)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """What the reviewer reads about one revision."""

    task: str
    plan: Plan
    revision: int
    exploration: str = ""
    """``exploration_digest`` of the conversation that led to the plan."""
    diff: PlanDiff | None = None
    """The changes from the previous revision, when there is one."""
    previous: PlanReview | None = None
    """The previous revision's review, so the reviewer can say which findings are resolved."""


@dataclass(frozen=True, slots=True)
class ResultReviewRequest:
    """What the reviewer reads about an executed plan (``plan_mode.review.review_result``)."""

    task: str
    plan: Plan
    revision: int
    diff: str
    """The result's diff against the tree the plan was approved on (``git diff``)."""


class PlanReviewer:
    """Reviews plan revisions through a ``ModelClient`` with its own prompt and model."""

    def __init__(
        self,
        client: ModelClient,
        *,
        model: str,
        timeout_seconds: float,
        max_tokens: int | None = None,
        acknowledge_blockers: bool = False,
        capabilities: ModelCapabilities | None = None,
    ) -> None:
        """``capabilities`` defaults to the model table's row for ``model``."""
        taken = capabilities if capabilities is not None else capabilities_of(model)
        self._client = client
        self._acknowledge_blockers = acknowledge_blockers
        self.model = model
        self.way: AnswerWay = answer_way(taken)
        """How this reviewer asks its model for findings."""
        self._timeout = timeout_seconds
        wanted = REVIEW_THINKING_MAX_TOKENS if taken.thinks_by_default else REVIEW_MAX_TOKENS
        self._max_tokens = bounded_max_tokens(model, max_tokens or wanted)

    @classmethod
    def from_settings(
        cls, client: ModelClient, settings: ReviewSettings, *, agent_model: str
    ) -> PlanReviewer:
        """The reviewer ``plan_mode.review`` describes; no model named means the agent's."""
        return cls(
            client,
            model=settings.model or agent_model,
            timeout_seconds=settings.timeout_seconds,
            acknowledge_blockers=settings.mode is ReviewMode.REQUIRE_ACKNOWLEDGEMENT,
        )

    def request_for(self, review: ReviewRequest) -> ModelRequest:
        """The Messages API request for ``review`` (exposed so its shape can be checked)."""
        text = review_message(
            task=review.task,
            plan=review.plan,
            revision=review.revision,
            exploration=review.exploration,
            diff=review.diff,
            previous=review.previous,
            way=self.way,
        )
        return self._request(REVIEWER_SYSTEM_PROMPT, text)

    def result_request_for(self, review: ResultReviewRequest) -> ModelRequest:
        """The Messages API request for the review of an executed plan's result."""
        text = result_message(
            task=review.task,
            plan=review.plan,
            revision=review.revision,
            diff=review.diff,
            way=self.way,
        )
        return self._request(RESULT_REVIEWER_SYSTEM_PROMPT, text)

    async def review(self, review: ReviewRequest) -> PlanReview:
        """The review of ``review.plan``; unavailable (with the reason logged) on any failure.
        Never raises, except that cancelling the caller cancels the call."""
        previous = review.previous
        earlier = previous.ordered() if previous is not None and previous.available else ()
        return await self._ask(
            self.request_for(review),
            _Subject(f"plan v{review.revision}", len(review.plan.steps), earlier),
        )

    async def review_result(self, review: ResultReviewRequest) -> PlanReview:
        """The review of what executing ``review.plan`` changed; as ``review``, never raises."""
        return await self._ask(
            self.result_request_for(review),
            _Subject(f"the result of plan v{review.revision}", len(review.plan.steps), ()),
        )

    def _request(self, system: str, text: str) -> ModelRequest:
        shape = request_shape(self.way)
        return ModelRequest(
            model=self.model,
            max_tokens=self._max_tokens,
            system=[{"type": "text", "text": system_prompt(system, self.way)}],
            tools=shape.tools,
            messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
            tool_choice=shape.tool_choice,
            output_config=shape.output_config,
        )

    def _retry_request(self, request: ModelRequest, unusable: _Unusable) -> ModelRequest:
        """``request`` again, its message saying what was wrong (a new block at its end)."""
        [message] = request.messages
        note = {"type": "text", "text": retry_note(unusable.reason, self.way)}
        max_tokens = request.max_tokens
        if unusable.cut_off:
            max_tokens = bounded_max_tokens(self.model, 2 * max_tokens)
        return dataclasses.replace(
            request,
            max_tokens=max_tokens,
            messages=[{**message, "content": [*message["content"], note]}],
        )

    async def _ask(self, request: ModelRequest, subject: _Subject) -> PlanReview:
        paid: list[ModelUsage] = []
        asking = request
        try:
            async with asyncio.timeout(self._timeout):
                reply = await self._client.create(asking)
                paid.append(reply.usage)
                outcome = self._read(subject, reply, paid)
                if isinstance(outcome, _Unusable):
                    log.warning("review of %s: asking again: %s", subject.name, outcome.reason)
                    first = outcome
                    asking = self._retry_request(request, first)
                    reply = await self._client.create(asking)
                    paid.append(reply.usage)
                    outcome = self._read(subject, reply, paid)
                    if isinstance(outcome, _Unusable):
                        reason = (
                            f"no usable answer after one retry: {first.reason}; "
                            f"then {outcome.reason}"
                        )
                        model = reply.model or self.model
                        return self._unavailable(subject, reason, _total(paid), model)
        except TimeoutError:
            return self._unavailable(
                subject,
                f"the reviewer did not answer within {self._timeout:g} seconds",
                _total([*paid, _estimated(asking)]),
            )
        except Exception as exc:  # any failure of the call is "unavailable", by design
            return self._unavailable(
                subject,
                f"the reviewer's call failed: {_first_line(exc)}",
                _total([*paid, _estimated(asking)]),
            )
        return outcome

    def _read(
        self, subject: _Subject, reply: ModelReply, paid: list[ModelUsage]
    ) -> PlanReview | _Unusable:
        """The review ``reply`` gives, or why it gives none worth asking again for."""
        model = reply.model or self.model
        if reply.stop_reason == "refusal":
            category = (reply.stop_details or {}).get("category")
            why = f"the reviewer refused ({category})" if category else "the reviewer refused"
            return self._unavailable(subject, why, _total(paid), model)
        if reply.stop_reason == "max_tokens":
            return _Unusable("the reviewer's answer was cut off (max_tokens)", cut_off=True)
        try:
            data = read_answer(reply, self.way)
        except ReviewAnswerInvalid as exc:
            return _Unusable(str(exc))
        try:
            answer = parse_review_answer(data, steps=subject.steps, previous=subject.previous)
        except ReviewAnswerInvalid as exc:
            return _Unusable(f"the reviewer's answer was malformed: {exc}")
        if answer.dropped:
            log.warning("review of %s: dropped %s", subject.name, "; ".join(answer.dropped))
        return PlanReview(
            model=model,
            usage=_total(paid),
            findings=answer.findings,
            resolved=answer.resolved,
            dropped=answer.dropped,
            dropped_blockers=answer.dropped_blockers,
            acknowledge_blockers=self._acknowledge_blockers,
        )

    def _unavailable(
        self,
        subject: _Subject,
        reason: str,
        usage: ModelUsage | None = None,
        model: str | None = None,
    ) -> PlanReview:
        log.warning("review of %s unavailable: %s", subject.name, reason)
        return PlanReview.unavailable(_clip(reason), model=model or self.model, usage=usage)


@dataclass(frozen=True, slots=True)
class _Unusable:
    """A reply with no usable review in it, and why: worth the one retry."""

    reason: str
    cut_off: bool = False
    """The answer stopped at ``max_tokens``: the retry gets more room."""


@dataclass(frozen=True, slots=True)
class _Subject:
    """What one review call is about: its name in the log, the plan's step count, and the
    earlier findings ``resolved`` may name (in the order the reviewer saw them)."""

    name: str
    steps: int
    previous: tuple[Finding, ...]


def _estimated(request: ModelRequest) -> ModelUsage:
    """What a call that gave no reply is counted as: its request's input, estimated."""
    return ModelUsage(
        input_tokens=estimate_tokens([request.system, request.tools, request.messages])
    )


def _total(usages: list[ModelUsage]) -> ModelUsage:
    """What several calls cost together."""
    return ModelUsage(
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cache_read_input_tokens=sum(u.cache_read_input_tokens for u in usages),
        cache_creation_input_tokens=sum(u.cache_creation_input_tokens for u in usages),
    )


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
