"""The plan reviewer: a second model call that reads each submitted revision before a human
does. ``digest`` condenses what the agent explored, ``prompt`` is what the reviewer is asked,
``answer_ways`` how its findings come back from the model at hand (structured outputs, a
forced tool, or a tool with automatic choice), ``reviewer`` makes the call and never fails
its caller."""

from plancord.agent.plan_review.answer_ways import (
    REVIEW_TOOL,
    REVIEW_TOOL_NAME,
    AnswerWay,
    answer_way,
)
from plancord.agent.plan_review.digest import DIGEST_CHARS, exploration_digest
from plancord.agent.plan_review.prompt import (
    RESULT_REVIEWER_SYSTEM_PROMPT,
    REVIEWER_SYSTEM_PROMPT,
)
from plancord.agent.plan_review.reviewer import PlanReviewer, ResultReviewRequest, ReviewRequest

__all__ = [
    "DIGEST_CHARS",
    "RESULT_REVIEWER_SYSTEM_PROMPT",
    "REVIEWER_SYSTEM_PROMPT",
    "REVIEW_TOOL",
    "REVIEW_TOOL_NAME",
    "AnswerWay",
    "PlanReviewer",
    "ResultReviewRequest",
    "ReviewRequest",
    "answer_way",
    "exploration_digest",
]
