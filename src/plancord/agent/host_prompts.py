"""The host's own words in an agent's conversation: every note plancord adds (a decision, a
restart, a spent budget) starts with ``HOST`` so the model can tell it from a human."""

from __future__ import annotations

HOST = "[plancord]"
CONTINUE_PROMPT = (
    f"{HOST} Your previous reply was cut off at the output token limit. "
    "Continue exactly where you stopped."
)
RESUME_PROMPT = f"{HOST} Continue."
