"""What decided a tool call: the closed set the decision records and the metrics share.

Its own module so the gate, the dispatch and the metrics can name a decider without
importing each other."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Decider"]


class Decider(StrEnum):
    GATE = "gate"
    """Plan mode's gate (a mutating tool while planning), or a tool kind that always runs."""
    FILTER = "filter"
    """The read-only filter's verdict on a shell command."""
    RULE = "rule"
    """A remembered rule: the operator's (config) or a member's ("Allow always")."""
    PROFILE = "profile"
    """The agent's permission profile."""
    HUMAN = "human"
    """A member's answer on a permission card (or nobody's, in time)."""
    DRIFT = "drift"
    """The drift policy: the call is outside the approved plan's current step."""
    STOP = "stop"
    """The turn was stopped (by a member, or the plan's budget) before the call ran."""
