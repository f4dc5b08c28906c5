"""Approval votes as records of their own, for plans that need several approvers
(``plan_mode.approvals``).

A vote is bound to one revision and its sha256, and kept apart from the audit log, so that
nothing else written about an agent (refused clicks, answers, drift) can push a vote out of
the count. Whether a vote *counts* is decided later, when the quorum would be reached
(``core.approval_votes``): the record says only who voted on what, and when."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class ApprovalVote(BaseModel):
    """One person's approval of one revision (``plan_id``, ``revision``, ``sha256``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan_id: str
    revision: int
    sha256: str
    voter_id: str
    voter_name: str
    at: datetime


class VoteWrite(StrEnum):
    """What keeping a vote did."""

    RECORDED = "recorded"
    """A new vote, written with its audit row."""
    ALREADY = "already"
    """This person had voted on this revision already; nothing was written."""
    CLOSED = "closed"
    """The revision no longer waits for a decision; nothing was written."""
