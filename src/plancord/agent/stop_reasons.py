"""What the tool loop does after each reply, decided by the reply's ``stop_reason``.

The Messages API documents seven stop reasons; each needs its own handling, and a new one
must not be mistaken for "the agent is done" silently. One table, read by the loop:

| stop reason | next step |
|---|---|
| ``end_turn``, ``stop_sequence`` | the reply is the answer; the turn ends |
| ``tool_use`` | run the tool calls and send their results |
| ``pause_turn`` | send the reply back as it is so the model continues |
| ``max_tokens`` | the reply was cut off: ask the model to continue (once) |
| ``model_context_window_exceeded`` | cut off by the context window: compact, then continue |
| ``refusal`` | stop; the reply's tool calls never run |
| anything else | stop and say which stop reason was not understood |
"""

from __future__ import annotations

from enum import Enum


class NextStep(Enum):
    ANSWERED = "answered"
    RUN_TOOLS = "run-tools"
    RESUME_PAUSED = "resume-paused"
    CONTINUE_TRUNCATED = "continue-truncated"
    COMPACT_AND_CONTINUE = "compact-and-continue"
    REFUSED = "refused"
    UNKNOWN = "unknown"


_STEPS = {
    "end_turn": NextStep.ANSWERED,
    "stop_sequence": NextStep.ANSWERED,
    "tool_use": NextStep.RUN_TOOLS,
    "pause_turn": NextStep.RESUME_PAUSED,
    "max_tokens": NextStep.CONTINUE_TRUNCATED,
    "model_context_window_exceeded": NextStep.COMPACT_AND_CONTINUE,
    "refusal": NextStep.REFUSED,
}


def next_step(stop_reason: str | None) -> NextStep:
    return _STEPS.get(stop_reason or "", NextStep.UNKNOWN)


def runs_tools(step: NextStep) -> bool:
    """Only a ``tool_use`` stop has complete tool calls; any other stop's calls never run."""
    return step is NextStep.RUN_TOOLS
