"""The plan tools: how the agent enters plan mode, submits its plan and reports progress.

They are thin: every decision (may the agent enter, is the plan valid, is a step number in
range) belongs to ``PlanningService``, and its ``PlancordError`` messages are already written
for the model, so they come back as error results unchanged. ``submit_plan`` takes the plan as
a loosely typed object whose schema spells out every field and limit: validation happens in
the service, whose messages name the field to fix, rather than in the runtime.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from plancord.agent.tools.base import Tool, ToolContext, ToolResult
from plancord.core.choices import MAX_CHOICE_CHARS, MAX_CHOICES, MIN_CHOICES
from plancord.core.errors import PlancordError
from plancord.core.gate import ToolKind
from plancord.core.plan import (
    DEFAULT_MAX_PLAN_BYTES,
    MAX_CONTEXT_NOTES_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_FILE_PATTERN_CHARS,
    MAX_FILES_PER_STEP,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    MAX_STEPS,
    MAX_SUMMARY_CHARS,
    MAX_TOOL_NAME_CHARS,
    MAX_TOOLS_PER_STEP,
)
from plancord.core.planning import Actor, EntrySource, Phase, PlanningState, StepStatus
from plancord.storage.plan_comments import PlanCommentStore

log = logging.getLogger(__name__)

MAX_REASON_CHARS = 1000
MAX_NOTE_CHARS = 500
MAX_COMPLETION_SUMMARY_CHARS = 4000

PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "summary": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_SUMMARY_CHARS,
            "description": "One line: what the plan achieves.",
        },
        "steps": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_STEPS,
            "description": "The steps, in the order you will carry them out.",
            "items": {
                "type": "object",
                "properties": {
                    "description": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_DESCRIPTION_CHARS,
                        "description": "What this step does, concretely (files, commands).",
                    },
                    "tools": {
                        "type": "array",
                        "maxItems": MAX_TOOLS_PER_STEP,
                        "items": {"type": "string", "maxLength": MAX_TOOL_NAME_CHARS},
                        "description": "Tools the step will use, e.g. str_replace, bash_execute.",
                    },
                    "risk": {
                        "type": "string",
                        "enum": ["low", "medium", "high"],
                        "description": "How much could go wrong or be hard to undo. Default low.",
                    },
                    "files": {
                        "type": "array",
                        "maxItems": MAX_FILES_PER_STEP,
                        "items": {"type": "string", "maxLength": MAX_FILE_PATTERN_CHARS},
                        "description": (
                            "Workspace paths or globs (src/*.py, docs/) the step will change. "
                            "Once approved, changes to other files need a human's OK."
                        ),
                    },
                },
                "required": ["description"],
                "additionalProperties": False,
            },
        },
        "questions": {
            "type": "array",
            "maxItems": MAX_QUESTIONS,
            "items": {
                "anyOf": [
                    {"type": "string", "maxLength": MAX_QUESTION_CHARS},
                    {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string", "maxLength": MAX_QUESTION_CHARS},
                            "choices": {
                                "type": "array",
                                "minItems": MIN_CHOICES,
                                "maxItems": MAX_CHOICES,
                                "items": {"type": "string", "maxLength": MAX_CHOICE_CHARS},
                            },
                        },
                        "required": ["question"],
                        "additionalProperties": False,
                    },
                ]
            },
            "description": (
                "Open questions for the human reviewing the plan. Give a question the "
                f"answers it could have as choices ({MIN_CHOICES} to {MAX_CHOICES}) and the "
                "reviewer picks one with a tap on the plan message; you get the answers with "
                "the approval."
            ),
        },
        "context_notes": {
            "type": "string",
            "maxLength": MAX_CONTEXT_NOTES_CHARS,
            "description": "What you found while exploring that the reviewer should know.",
        },
    },
    "required": ["summary", "steps"],
    "additionalProperties": False,
}


def _notify_failed(agent: str) -> None:
    log.warning("could not tell %s's channel about a plan-mode change", agent, exc_info=True)


class EnterPlanModeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: str = Field(
        min_length=1,
        max_length=MAX_REASON_CHARS,
        description="Why this task needs a plan first; shown to the human.",
    )


class EnterPlanModeTool(Tool[EnterPlanModeInput]):
    name: ClassVar[str] = "enter_plan_mode"
    description: ClassVar[str] = (
        "Switch yourself into plan mode before a task that is large, risky or ambiguous. In "
        "plan mode you can only read (view, glob, grep, git_status/diff/log, read-only shell "
        "commands) and ask_user; then you call submit_plan, and a human approves the plan "
        "before anything changes. Calling it while already planning changes nothing."
    )
    kind: ClassVar[ToolKind] = ToolKind.PLANNING
    Input: ClassVar[type[BaseModel]] = EnterPlanModeInput

    def detail(self, args: EnterPlanModeInput) -> str:
        return args.reason[:200]

    async def run(self, args: EnterPlanModeInput, ctx: ToolContext) -> ToolResult:
        name = ctx.agent.name
        try:
            outcome = await ctx.planning.enter(
                name,
                source=EntrySource.AGENT,
                actor=Actor.agent(name),
                reason=args.reason,
                task=args.reason,
                requested_by=ctx.requester,
                interactive=ctx.interactive,
            )
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        if not outcome.entered:
            return ToolResult(_already(outcome.state))
        try:
            await ctx.notifier.say(
                name, f"I'd like to plan this out before proceeding. Reason: {args.reason}"
            )
        except Exception:
            _notify_failed(name)
        return ToolResult(
            "You are now in plan mode (read-only). Explore with view, glob, grep, the read-only "
            "git tools and read-only shell commands, ask_user if something is unclear, then "
            "call submit_plan with your plan. Changes become possible once a human approves it."
        )


def _already(state: PlanningState) -> str:
    if state.phase is Phase.GATHERING:
        return (
            "You are already in plan mode (phase: gathering). Keep exploring, then call "
            "submit_plan."
        )
    if state.phase is Phase.SUBMITTED:
        return (
            f"You are already in plan mode (phase: submitted): plan v{state.revision} is "
            "waiting for a human's decision."
        )
    return (
        f"Plan mode is already under way (phase: {state.phase.value}): an approved plan is "
        "being executed. Carry it out and call complete_plan when done."
    )


class SubmitPlanInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: Annotated[dict[str, Any] | str, WithJsonSchema(PLAN_SCHEMA)] = Field(
        description=(
            f"The plan: summary (one line, at most {MAX_SUMMARY_CHARS} characters), steps "
            f"(1 to {MAX_STEPS}, each a description of at most {MAX_DESCRIPTION_CHARS} "
            "characters with optional tools, files and risk low/medium/high), optional questions "
            "(text, or {question, choices} to answer with one tap) and context_notes. The "
            f"whole plan must stay under {DEFAULT_MAX_PLAN_BYTES:,} bytes as JSON unless the "
            "operator set another limit."
        )
    )
    addressed_comments: list[int] = Field(
        default_factory=list,
        max_length=100,
        description="The ids of the reviewers' comments (#3) this revision addresses.",
    )


class SubmitPlanTool(Tool[SubmitPlanInput]):
    name: ClassVar[str] = "submit_plan"
    description: ClassVar[str] = (
        "Submit your plan for a human to approve, while in plan mode. The plan is an object "
        f"with summary (one line, at most {MAX_SUMMARY_CHARS} characters), steps (1 to "
        f"{MAX_STEPS}; each has description, at most {MAX_DESCRIPTION_CHARS} characters, "
        "tools it will use and risk low/medium/high), questions for the reviewer and "
        "context_notes. Make the steps concrete enough to approve: which files change and "
        "how. If the plan is rejected as invalid, the result says which field to fix. After "
        "a successful submit your turn ends; the human approves, asks for changes or rejects. "
        "While executing an approved plan, submitting is how you amend it when the work "
        "needs more than the plan says: execution pauses until the amendment is approved."
    )
    kind: ClassVar[ToolKind] = ToolKind.PLANNING
    Input: ClassVar[type[BaseModel]] = SubmitPlanInput

    def detail(self, args: SubmitPlanInput) -> str:
        summary = args.plan.get("summary") if isinstance(args.plan, dict) else None
        return str(summary)[:200] if summary else "plan"

    async def run(self, args: SubmitPlanInput, ctx: ToolContext) -> ToolResult:
        name = ctx.agent.name
        try:
            if ctx.phase is Phase.EXECUTING:
                revision = await ctx.planning.amend(name, args.plan)
            else:
                revision = await ctx.planning.submit(name, args.plan)
            status = await ctx.planning.status(name)
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        submitted = f"Plan v{revision.revision} (sha {revision.sha8}) submitted"
        if args.addressed_comments:
            done = await PlanCommentStore(ctx.store.db).mark_addressed(
                revision.plan_id, args.addressed_comments, revision.revision
            )
            if done:
                submitted += ", addressing comments " + ", ".join(f"#{i}" for i in done)
        if status.state.phase is Phase.SUBMITTED and status.state.amends is not None:
            return ToolResult(
                f"{submitted} as an amendment to the approved v{status.state.amends}. "
                "Execution is paused: make no changes until a human approves it."
            )
        if status.state.phase is Phase.EXECUTING:
            return ToolResult(
                f"{submitted} and approved by policy (no approval required). Carry it out "
                "step by step with update_plan_step, then call complete_plan."
            )
        return ToolResult(f"{submitted}; wait for the human's decision.")


class UpdatePlanStepInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int = Field(ge=1, le=MAX_STEPS, description="Step number in the approved plan, from 1.")
    status: Literal["in_progress", "done", "skipped"] = Field(
        description="in_progress when you start the step, done or skipped when it is over."
    )
    note: str = Field(
        default="",
        max_length=MAX_NOTE_CHARS,
        description="Optional short note for the human, e.g. why a step was skipped.",
    )


class UpdatePlanStepTool(Tool[UpdatePlanStepInput]):
    name: ClassVar[str] = "update_plan_step"
    description: ClassVar[str] = (
        "Record progress on a step of the approved plan you are executing: in_progress when "
        "you start it, done or skipped (say why in note) when it is over. The human sees the "
        "progress in the channel. Only while an approved plan is being executed."
    )
    kind: ClassVar[ToolKind] = ToolKind.PLANNING
    Input: ClassVar[type[BaseModel]] = UpdatePlanStepInput

    def detail(self, args: UpdatePlanStepInput) -> str:
        return f"step {args.step} {args.status}"

    async def run(self, args: UpdatePlanStepInput, ctx: ToolContext) -> ToolResult:
        try:
            state = await ctx.planning.update_step(
                ctx.agent.name, args.step, StepStatus(args.status), args.note
            )
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        finished = sum(s.status in (StepStatus.DONE, StepStatus.SKIPPED) for s in state.steps)
        text = f"Step {args.step} marked {args.status}; {finished} of {len(state.steps)} finished."
        if finished == len(state.steps):
            text += " Every step is finished: call complete_plan with a summary."
        return ToolResult(text)


class CompletePlanInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str = Field(
        min_length=1,
        max_length=MAX_COMPLETION_SUMMARY_CHARS,
        description="What was done, and anything left undone or worth checking.",
    )


class CompletePlanTool(Tool[CompletePlanInput]):
    name: ClassVar[str] = "complete_plan"
    description: ClassVar[str] = (
        "Finish the approved plan you have been executing, with a summary for the human. "
        "Plan mode ends; mark each step done or skipped with update_plan_step first."
    )
    kind: ClassVar[ToolKind] = ToolKind.PLANNING
    Input: ClassVar[type[BaseModel]] = CompletePlanInput

    def detail(self, args: CompletePlanInput) -> str:
        return args.summary[:200]

    async def run(self, args: CompletePlanInput, ctx: ToolContext) -> ToolResult:
        name = ctx.agent.name
        try:
            before = await ctx.planning.status(name)
            await ctx.planning.complete(name, Actor.agent(name), args.summary)
        except PlancordError as exc:
            return ToolResult.error(str(exc))
        text = "Plan complete; plan mode is over."
        open_steps = [
            str(number)
            for number, step in enumerate(before.state.steps, start=1)
            if step.status not in (StepStatus.DONE, StepStatus.SKIPPED)
        ]
        if open_steps:
            text += f" Steps {', '.join(open_steps)} were not marked done or skipped."
        return ToolResult(text)
