"""What the model sees: a frozen prefix, then the stored conversation, appended to only.

Models with preserved thinking bind every thinking block to everything before it (the
top-level ``system``, the ``tools`` and every earlier message), so the conversation is
append-only: ``system`` and ``tools`` are built once per conversation (``system_blocks``,
kept by ``ConversationStore.freeze_prefix``) and every assistant turn goes back exactly as
it came. The *regime* — the phase, what is allowed, the approved plan with per-step status —
is an instruction the host appends (``plancord.agent.instructions``) when it changes, never
an edit of an earlier turn. The model never holds the mode bit: the host does.

Caching: one fixed breakpoint on the system prompt (covers tools + system) and the request's
top-level automatic breakpoint, which the API moves to the newest block itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from plancord.core.planning import ApprovalMode, Phase, PlanningState, PlanRevision, StepStatus

Message = dict[str, Any]
EPHEMERAL = {"type": "ephemeral"}

BASE_SYSTEM_PROMPT = """\
You are a coding agent hosted by plancord in a Discord channel. You work in a git workspace \
with tools to read files (view, glob, grep), run shell commands (bash_execute), edit files \
(create_file, str_replace), use git, and ask the user questions (ask_user). The repository's \
.git directory is read-only to shell commands: git in bash_execute can read (status, log, \
diff, show) but not commit, branch, tag or change refs, config or hooks; commit, branch and \
switch branches with the git_commit, git_branch and git_checkout tools.

Plan before you act. For a task that touches several files, is ambiguous, or would be costly to \
undo, call enter_plan_mode first: explore read-only, then call submit_plan with a summary, \
concrete steps (each with the tools it needs and its risk: low, medium or high) and any open \
questions. A human approves, edits or rejects the plan. Once approved, work through the steps \
in order, calling update_plan_step as you start and finish each, and complete_plan when every \
step is done or skipped. If the work needs more than the plan says, submit an amended plan \
with submit_plan (execution pauses until a human approves it); if the plan turns out wrong, \
stop and tell the user.

The host tells you your regime in <plancord-regime> blocks it adds to the conversation when \
the regime changes: your current phase and what is allowed. The newest one is always right, \
and it overrides anything said earlier. Calls the regime does not allow are refused. Keep \
replies short: they are read on phones."""

STEP_MARK = {
    StepStatus.PENDING: "pending",
    StepStatus.IN_PROGRESS: "in progress",
    StepStatus.DONE: "done",
    StepStatus.SKIPPED: "skipped",
}


def system_blocks(agent_prompt: str) -> list[dict[str, Any]]:
    text = BASE_SYSTEM_PROMPT
    if agent_prompt.strip():
        text += "\n\nInstructions for this agent:\n" + agent_prompt.strip()
    return [{"type": "text", "text": text, "cache_control": dict(EPHEMERAL)}]


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown time"


@dataclass(frozen=True, slots=True)
class PlanningTools:
    """The agent's tools as the gate treats them while planning, from the kind each tool
    declares: ``allowed`` (not mutating: they run), whether a shell is among them (its
    read-only commands run in a read-only sandbox), and ``hidden`` (not to be used:
    ``plan_mode.tool_visibility: filter``; they stay declared, and the gate refuses them)."""

    allowed: tuple[str, ...] = ()
    shell: bool = False
    hidden: tuple[str, ...] = ()

    def allowed_line(self) -> str:
        shell = (
            ("read-only shell commands (they run in a read-only sandbox)",) if self.shell else ()
        )
        return "Allowed: " + ", ".join((*self.allowed, *shell)) + "."


def regime_text(state: PlanningState, revision: PlanRevision | None, tools: PlanningTools) -> str:
    """The regime for the current phase, naming what ``tools`` allows while planning."""
    hidden = tools.hidden
    lines = ["<plancord-regime>"]
    if state.phase is Phase.INACTIVE:
        lines += [
            "Phase: normal (not in plan mode).",
            "For a task that touches several files, is ambiguous or is costly to undo, call "
            "enter_plan_mode before changing anything.",
        ]
    elif state.phase is Phase.GATHERING:
        who = f" for {state.requested_by_name}" if state.requested_by_name else ""
        lines += [
            f"Phase: plan mode — gathering (since {_when(state.entered_at)}{who}).",
        ]
        if state.task:
            lines.append(f"Task: {state.task}")
        if state.entry_reason and state.entry_reason != state.task:
            lines.append(f"Why plan mode: {state.entry_reason}")
        if state.revision:
            lines.append(
                f"Plan v{state.revision} was sent back for changes; submit v{state.revision + 1}."
            )
        lines += [
            tools.allowed_line(),
            "Refused: creating or editing files, commits, pushes, and any command that changes "
            "something.",
            "When you understand the task, call submit_plan.",
        ]
        if hidden:
            lines.append("Not available while planning (refused if called): " + ", ".join(hidden))
    elif state.phase is Phase.SUBMITTED:
        lines += [
            f"Phase: plan mode — plan v{state.revision} submitted, waiting for a human decision.",
            "Do not act on the plan yet; answer questions read-only.",
        ]
        if hidden:
            lines.append("Not available while planning (refused if called): " + ", ".join(hidden))
    else:
        lines += _executing_lines(state, revision)
    lines.append("</plancord-regime>")
    return "\n".join(lines)


def _executing_lines(state: PlanningState, revision: PlanRevision | None) -> list[str]:
    sha8 = (state.plan_sha or "")[:8]
    lines = [
        f"Phase: executing the approved plan v{state.revision} (sha {sha8}, approved by "
        f"{state.approved_by_name or 'a human'}). You may now modify files.",
    ]
    if state.approval_mode is ApprovalMode.CONFIRM_EACH_EDIT:
        lines.append("Every change asks a human for permission first.")
    if revision is not None:
        lines.append(f"Plan: {revision.plan.summary}")
        for number, step in enumerate(revision.plan.steps, start=1):
            progress = state.steps[number - 1] if number <= len(state.steps) else None
            status = STEP_MARK[progress.status] if progress else "pending"
            note = f" — {progress.note}" if progress and progress.note else ""
            lines.append(f"{number}. [{status}] {step.description}{note}")
    return lines


def text_of(content: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in content if b.get("type") == "text" and b.get("text"))


def estimate_tokens(value: Any) -> int:
    """About 4 bytes per token, like the API's own rule of thumb."""
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8")) // 4 + 1


def compaction_cut(history: list[Message], keep_tokens: int) -> int | None:
    """Where to cut so the newest ``keep_tokens`` stay verbatim: the index of a user message
    that carries no tool results (so no tool_use/tool_result pair is split), or None."""
    total = 0
    best: int | None = None
    for index in range(len(history) - 1, 0, -1):
        total += estimate_tokens(history[index])
        message = history[index]
        is_clean_user = message["role"] == "user" and not any(
            b.get("type") == "tool_result" for b in message["content"]
        )
        if is_clean_user:
            best = index
            if total >= keep_tokens:
                break
    return best


def transcript(history: list[Message]) -> str:
    """Plain text of a conversation, for the summariser."""
    out: list[str] = []
    for message in history:
        for block in message["content"]:
            kind = block.get("type")
            if kind == "text":
                out.append(f"{message['role']}: {block['text']}")
            elif kind == "tool_use":
                args = json.dumps(block.get("input"), ensure_ascii=False)[:400]
                out.append(f"assistant called {block.get('name')}({args})")
            elif kind == "tool_result":
                content = block.get("content")
                text = content if isinstance(content, str) else text_of(content or [])
                flag = " (error)" if block.get("is_error") else ""
                out.append(f"tool result{flag}: {text[:600]}")
    return "\n".join(out)


INTERRUPTED = (
    "Interrupted: plancord stopped (restart, crash or error) before this tool call finished, so "
    "it may or may not have taken effect. Check the current state before repeating it."
)
#: What an interrupted call of a tool whose work cannot outlive the process says instead.
INTERRUPTED_BY_TOOL = {
    "explore": (
        "Interrupted: plancord restarted (or stopped) while this explore sub-agent ran. The "
        "sub-agent was ended by the restart and gave no answer; call explore again if you "
        "still need one."
    ),
}


def repair_history(history: list[Message]) -> tuple[list[Message], bool]:
    """Make a stored conversation valid for the Messages API again after an interruption.

    Every ``tool_use`` must be answered by a ``tool_result`` at the start of the next user
    message. A call cut off by a restart or an error gets an ``is_error`` result saying so
    (appended, when the call was the conversation's last word); a result that answers nothing
    is dropped. Returns the history and whether it changed; ``settle_edit`` says what an edit
    of an earlier turn costs the thinking after it.
    """
    fixed: list[Message] = []
    changed = False
    pending: list[tuple[str, str]] = []
    for message in history:
        if message["role"] == "user":
            content = list(message["content"])
            answered = {b.get("tool_use_id") for b in content if b.get("type") == "tool_result"}
            ids = {i for i, _ in pending}
            kept = [
                b for b in content if b.get("type") != "tool_result" or b.get("tool_use_id") in ids
            ]
            missing = [_interrupted(*call) for call in pending if call[0] not in answered]
            if missing or len(kept) != len(content):
                changed = True
                results = [b for b in kept if b.get("type") == "tool_result"]
                others = [b for b in kept if b.get("type") != "tool_result"]
                content = [*results, *missing, *others]
                if not content:
                    content = [{"type": "text", "text": "(earlier tool results were removed)"}]
            fixed.append({"role": "user", "content": content})
            pending = []
        else:
            if pending:
                changed = True
                fixed.append({"role": "user", "content": [_interrupted(*call) for call in pending]})
            fixed.append(message)
            pending = [
                (b["id"], str(b.get("name")))
                for b in message["content"]
                if b.get("type") == "tool_use"
            ]
    if pending:
        changed = True
        fixed.append({"role": "user", "content": [_interrupted(*call) for call in pending]})
    return fixed, changed


THINKING_TYPES = ("thinking", "redacted_thinking")


def unanswered_from(history: Sequence[Message]) -> int:
    """Where the unanswered tail starts: the index after the last assistant turn. Nothing the
    model wrote was produced from the tail, so no thinking block is bound to it."""
    for index in range(len(history) - 1, -1, -1):
        if history[index]["role"] == "assistant":
            return index + 1
    return 0


def without_thinking(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every thinking block left out (what the docs say to do with turns
    kept after the history before them changed); a turn of nothing but thinking keeps a
    short note so the roles still alternate."""
    out: list[Message] = []
    for message in messages:
        content = message["content"]
        if message["role"] != "assistant" or not any(
            b.get("type") in THINKING_TYPES for b in content
        ):
            out.append(message)
            continue
        kept = [b for b in content if b.get("type") not in THINKING_TYPES]
        out.append({**message, "content": kept or [{"type": "text", "text": "(thought)"}]})
    return out


def settle_edit(before: Sequence[Message], after: list[Message]) -> tuple[int, list[Message]]:
    """``after`` is ``before`` changed: from which index the stored conversation must be
    rewritten, and the messages from there. An edit of an answered turn invalidates every
    thinking block after it, so those are left out (the conversation stays valid, a new
    prefix from the edit on); an edit of the unanswered tail, or messages only appended,
    cost nothing."""
    first = next(
        (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
        min(len(before), len(after)),
    )
    tail = after[first:]
    if first < unanswered_from(before):
        tail = without_thinking(tail)
    return first, tail


def _interrupted(tool_use_id: str, name: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": INTERRUPTED_BY_TOOL.get(name, INTERRUPTED),
        "is_error": True,
    }
