"""The host's own words in an agent's conversation: every note plancord adds (a decision, a
restart, a spent budget) starts with ``HOST`` so the model can tell it from a human."""

from __future__ import annotations

HOST = "[plancord]"
CONTINUE_PROMPT = (
    f"{HOST} Your previous reply was cut off at the output token limit. "
    "Continue exactly where you stopped."
)
RESUME_PROMPT = f"{HOST} Continue."
EMPTY_REPLY_NUDGE = (
    f"{HOST} Your last reply after the tool results was empty. Go on with the task: call the "
    "next tool, or say what you found."
)
PREFIX_REPAIRED = (
    "(The model API refused part of this conversation's earlier reasoning as changed since it "
    "was written; from now on it drops such reasoning instead, and the turn goes on.)"
)
