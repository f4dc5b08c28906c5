"""The reviewer's model call: one request, one forced tool, a ``PlanReview`` whatever happens.

A review is advice for the approver, so it must never be the reason a plan is stuck or a
turn fails: an outage, a timeout, a refusal, an answer cut off or not in the tool's shape
all become an unavailable review carrying the reason (logged) and whatever the call cost:
what the API reported, or, for a call that timed out or failed without a reply, its
request's estimated input tokens, so a failing reviewer still counts toward the plan's
budget.
Whether an unavailable review blocks approval is the operator's choice
(``plan_mode.review.require_review``), decided where approval is decided.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from plancord.agent.context import estimate_tokens
from plancord.agent.plan_review.prompt import (
    RESULT_REVIEWER_SYSTEM_PROMPT,
    REVIEW_TOOL,
    REVIEW_TOOL_NAME,
    REVIEWER_SYSTEM_PROMPT,
    TOOL_CHOICE,
    result_message,
    review_message,
)
from plancord.core.plan import Plan
from plancord.core.plan_diff import PlanDiff
from plancord.core.ports import ModelClient, ModelReply, ModelRequest, ModelUsage
from plancord.core.review import Finding, PlanReview, ReviewAnswerInvalid
from plancord.core.review_answer import parse_review_answer
from plancord.core.settings import ReviewMode, ReviewSettings
from plancord.llm.models import bounded_max_tokens

REVIEW_MAX_TOKENS: Final = 4096

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
        max_tokens: int = REVIEW_MAX_TOKENS,
        acknowledge_blockers: bool = False,
    ) -> None:
        self._client = client
        self._acknowledge_blockers = acknowledge_blockers
        self.model = model
        self._timeout = timeout_seconds
        self._max_tokens = bounded_max_tokens(model, max_tokens)

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
        )
        return self._request(REVIEWER_SYSTEM_PROMPT, text)

    def result_request_for(self, review: ResultReviewRequest) -> ModelRequest:
        """The Messages API request for the review of an executed plan's result."""
        text = result_message(
            task=review.task, plan=review.plan, revision=review.revision, diff=review.diff
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
        return ModelRequest(
            model=self.model,
            max_tokens=self._max_tokens,
            system=[{"type": "text", "text": system}],
            tools=[dict(REVIEW_TOOL)],
            messages=[{"role": "user", "content": [{"type": "text", "text": text}]}],
            tool_choice=dict(TOOL_CHOICE),
        )

    async def _ask(self, request: ModelRequest, subject: _Subject) -> PlanReview:
        try:
            async with asyncio.timeout(self._timeout):
                reply = await self._client.create(request)
        except TimeoutError:
            return self._unavailable(
                subject,
                f"the reviewer did not answer within {self._timeout:g} seconds",
                _estimated(request),
            )
        except Exception as exc:  # any failure of the call is "unavailable", by design
            return self._unavailable(
                subject, f"the reviewer's call failed: {_first_line(exc)}", _estimated(request)
            )
        return self._read(subject, reply)

    def _read(self, subject: _Subject, reply: ModelReply) -> PlanReview:
        model = reply.model or self.model
        if reply.stop_reason == "refusal":
            return self._unavailable(subject, "the reviewer refused", reply.usage, model)
        if reply.stop_reason == "max_tokens":
            return self._unavailable(
                subject, "the reviewer's answer was cut off (max_tokens)", reply.usage, model
            )
        answers = [
            block
            for block in reply.content
            if block.get("type") == "tool_use" and block.get("name") == REVIEW_TOOL_NAME
        ]
        if len(answers) != 1:
            return self._unavailable(
                subject,
                f"the reviewer answered with {len(answers)} {REVIEW_TOOL_NAME} calls, not one",
                reply.usage,
                model,
            )
        try:
            answer = parse_review_answer(
                _input_of(answers[0]), steps=subject.steps, previous=subject.previous
            )
        except ReviewAnswerInvalid as exc:
            return self._unavailable(
                subject, f"the reviewer's answer was malformed: {exc}", reply.usage, model
            )
        if answer.dropped:
            log.warning("review of %s: dropped %s", subject.name, "; ".join(answer.dropped))
        return PlanReview(
            model=model,
            usage=reply.usage,
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


def _input_of(block: Mapping[str, Any]) -> object:
    return block.get("input")


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
