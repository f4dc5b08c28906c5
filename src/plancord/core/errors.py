"""Domain errors. Each carries attributes for code and a message a person can read.

Decisions are values elsewhere (``GateDecision``, ``Verdict``); these are the cases where a
request cannot be carried out at all, and the edge (Discord, CLI, tool loop) shows the message.
"""

from __future__ import annotations

from datetime import datetime


class PlancordError(Exception):
    """Base class: ``str(exc)`` is the message shown to users."""


class AgentNotFound(PlancordError):
    def __init__(self, agent: str) -> None:
        self.agent = agent
        super().__init__(f"There is no agent named {agent!r}.")


class InvalidTransition(PlancordError):
    def __init__(self, phase: str, event: str, message: str) -> None:
        self.phase = phase
        self.event = event
        super().__init__(message)


class StalePlan(PlancordError):
    """An action named a plan revision that is no longer the current one."""

    def __init__(self, plan_id: str, revision: int, current_revision: int | None) -> None:
        self.plan_id = plan_id
        self.revision = revision
        self.current_revision = current_revision
        if current_revision is not None and current_revision > revision:
            text = (
                f"Plan v{revision} was superseded by v{current_revision}; "
                f"decide on v{current_revision} instead."
            )
        else:
            text = f"Plan v{revision} is no longer the current plan."
        super().__init__(text)


class AlreadyDecided(InvalidTransition):
    """Somebody else decided on this revision first (or it timed out)."""

    def __init__(self, action: str, by: str, at: datetime, revision: int) -> None:
        self.action = action
        self.by = by
        self.at = at
        self.revision = revision
        text = (
            f"Plan v{revision} was already {action} by {by}."
            if by
            else (f"Plan v{revision} already {action}.")
        )
        super().__init__("decided", action, text)


class NotAuthorised(PlancordError):
    pass


class PlanModeDisabled(PlancordError):
    def __init__(self, agent: str) -> None:
        self.agent = agent
        super().__init__(f"Plan mode is disabled for agent {agent!r} (plan_mode.enabled: false).")


class EntryRefused(PlancordError):
    """Plan mode cannot start where no human could ever approve the plan."""


class PlanValidationError(PlancordError):
    """The submitted plan breaks the schema or a limit; the message tells the model what to fix."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"- {p}" for p in problems)
        super().__init__(
            "The plan was not accepted. Fix the following and call submit_plan again:\n" + lines
        )


class StorageError(PlancordError):
    """The database could not complete an operation (locked, full, unreadable). Nothing changed."""

    def __init__(self, message: str, kind: str = "other") -> None:
        self.kind = kind
        super().__init__(message)


class VersionConflict(PlancordError):
    """The planning state changed between load and save (another decision won the race)."""

    def __init__(self, agent: str, expected_version: int) -> None:
        self.agent = agent
        self.expected_version = expected_version
        super().__init__(f"The plan state of {agent!r} changed meanwhile; try again.")


class ModelCallFailed(PlancordError):
    """The model API failed after its retries; the conversation is kept as it was."""


class ContextTooLong(ModelCallFailed):
    """The API refused the request because the prompt does not fit the model's context."""


class ThinkingPrefixMismatch(ModelCallFailed):
    """The API refused a thinking block sent back because something before it changed since
    it was produced (the preserved-thinking prefix check): the conversation must be sent with
    ``prefix_mismatch_behavior: drop_block`` from now on, and the change that broke it found."""


class RequestTooLarge(ModelCallFailed):
    """The API refused the request because its body is over the size it takes (413)."""


class CardNotShown(PlancordError):
    """A card that asks a human (a checkpoint, a permission request) could not be shown in
    the agent's channel, even after retries: nobody can answer it, so what it asked is not
    run. The message names the card and Discord's reason."""

    def __init__(self, card: str, reason: str) -> None:
        self.card = card
        self.reason = reason
        super().__init__(f"the {card} card could not be posted: {reason}")


class ToolResultsNotSaved(PlancordError):
    """Tools ran, then the database refused to record their results.

    The tools' effects (files written, commands run) are real, so the message says so rather
    than the storage error's "nothing was changed"; the next turn marks the calls as
    interrupted, so the agent checks the state before repeating them."""

    def __init__(self, calls: str, cause: StorageError) -> None:
        reason = (
            str(cause).replace("; nothing was changed", "").replace(" nothing was changed.", "")
        )
        super().__init__(
            f"These tool calls ran, but their results could not be saved: {calls}. {reason} "
            "Their changes are in the workspace; send a message to continue and the agent "
            "will check where it stands."
        )


class StaleTree(PlancordError):
    """An approval refused because the workspace changed after the plan was submitted."""


class ExecutionRefused(PlancordError):
    """An approval refused because the workspace cannot take an execution branch; the
    message says why, and nothing executes."""
