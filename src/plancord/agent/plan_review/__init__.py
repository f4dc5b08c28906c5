"""The plan reviewer: a second model call that reads each submitted revision before a human
does. ``digest`` condenses what the agent explored, ``prompt`` is what the reviewer is asked
and answers with, ``reviewer`` makes the call and never fails its caller."""

from plancord.agent.plan_review.digest import DIGEST_CHARS, exploration_digest
from plancord.agent.plan_review.prompt import (
    RESULT_REVIEWER_SYSTEM_PROMPT,
    REVIEW_TOOL,
    REVIEW_TOOL_NAME,
    REVIEWER_SYSTEM_PROMPT,
)
from plancord.agent.plan_review.reviewer import PlanReviewer, ResultReviewRequest, ReviewRequest

__all__ = [
    "DIGEST_CHARS",
    "RESULT_REVIEWER_SYSTEM_PROMPT",
    "REVIEWER_SYSTEM_PROMPT",
    "REVIEW_TOOL",
    "REVIEW_TOOL_NAME",
    "PlanReviewer",
    "ResultReviewRequest",
    "ReviewRequest",
    "exploration_digest",
]
