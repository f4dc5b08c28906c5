"""Execution held by what it does: the host observes every call that can change files and
holds what it changed to the step the host keeps as current.

Why this exists: the agent's arguments and reports are claims. Around each mutating call of
an executing plan, ``ExecutionHost`` judges the tool alone before the call (a tool no step
from the current one on uses is drift, decided by the gate as before; a tool only a later
🔴 step uses has that step's checkpoint answered first), then observes the workspace
(``WorkspaceObserver``), adds what the repository's own state says was committed or staged,
and holds the changed paths to the current step (``core.holding``):

- within the step: kept, recorded as a command of the step;
- only a later step covers it: the plan moves on (the current step committed, the steps
  passed over skipped); when that step is 🔴 the change is undone while its checkpoint
  card waits (so neither a wait nor a restart leaves it in place), put back exactly on
  Continue and left undone otherwise;
- drift: ``ask`` holds the change while the card (paths and a short diff) waits, and Deny
  or no answer restores the paths exactly; ``refuse`` restores them and tells the model;
  ``log`` keeps and flags them.

What cannot be observed is drift that cannot be undone: ``log`` flags it, anything else
ends execution (fail closed). A move of ``HEAD`` off the execution branch is drift whatever
the step's files say.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from plancord.agent.execution.observe import Effects, RestoreFailed, Unobserved, WorkspaceObserver
from plancord.agent.execution.repository import RepositoryLook
from plancord.agent.execution.starter import branch_record
from plancord.agent.execution.steps import StepKeeper
from plancord.core.drift import DriftPolicy
from plancord.core.errors import CardNotShown
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
)
from plancord.core.holding import (
    KnownWrites,
    MovesOn,
    StepDrift,
    WithinStep,
    entering_checkpoint,
    hold_to_step,
)
from plancord.core.plan import Plan
from plancord.core.planning import Actor, AuditAction, AuditEntry
from plancord.core.ports import Clock, Notifier, PermissionRequest
from plancord.core.sandbox_policy import SandboxSettings
from plancord.storage.executions import ExecutionStore
from plancord.storage.store import SqlStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HeldCall:
    """One mutating call of a running execution, as the host holds it."""

    record: ExecutionRecord
    plan: Plan
    tool: str
    action: str
    requested_by: str | None
    timeout_seconds: float
    policy: DriftPolicy
    checkpoints: bool
    drift_decided: bool = False
    """The tool itself was drift and the gate already decided it before the call."""
    commit_message: str | None = None
    """The agent's own message, when the call is ``git_commit``: it names the step's work."""
    allowed: KnownWrites | None = None
    """The writes the call was known to make before it ran, when they were drift and the
    gate already decided them: those are kept, anything else it changes is held again."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What became of a call's effects: ``error`` for the model when they were not kept
    (or kept only as drift), ``stop`` when execution (and the turn) must end."""

    error: str | None = None
    stop: bool = False
    answer: str | None = None
    """Before the call: the host did what the call asked (a ``git_commit`` that ended the
    step committed its work under the agent's message), so the tool does not run."""


class ExecutionHost:
    """Observers per agent and the judgement around each mutating call."""

    def __init__(
        self,
        *,
        executions: ExecutionStore,
        audit: SqlStore,
        steps: StepKeeper,
        notifier: Notifier,
        clock: Clock,
        agents_dir: Path,
        sandbox: SandboxSettings,
    ) -> None:
        self._executions = executions
        self._audit = audit
        self._steps = steps
        self._notifier = notifier
        self._clock = clock
        self._agents_dir = agents_dir
        self._sandbox = sandbox
        self._observers: dict[str, tuple[str, WorkspaceObserver]] = {}
        self._repository = RepositoryLook(agents_dir, sandbox)

    async def running(self, agent: str) -> ExecutionRecord | None:
        return await self._executions.running(agent)

    @staticmethod
    def tool_drift(
        plan: Plan, record: ExecutionRecord, tool: str, writes: KnownWrites | None = None
    ) -> str | None:
        """Before a call, judged by its tool and the writes it is known to make: why no
        step from the current one on covers it (the gate decides that drift by policy, so
        it is asked before it happens), or None. A move of ``HEAD`` off the execution
        branch is drift whatever the step's files say."""
        paths = writes.paths if writes is not None and writes.paths else None
        held = hold_to_step(plan, record.current_step, tool, paths)
        if isinstance(held, StepDrift):
            return held.reason
        if writes is not None and writes.leaves(record.branch):
            return f"the call would move HEAD off the execution branch `{record.branch}`"
        return None

    async def decided_before(
        self,
        record: ExecutionRecord,
        tool: str,
        action: str,
        paths: tuple[str, ...],
        reason: str,
        decision: DriftDecision,
    ) -> None:
        """Record a drift the gate decided before the call ran (asked, refused or logged:
        the gate audited it) with the step's events, as one decided after a call is."""
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=record.plan_id,
                at=self._clock.now(),
                step=record.current_step + 1,
                kind=ExecutionEventKind.DRIFT,
                tool=tool,
                action=action,
                paths=paths,
                reason=reason,
                decision=decision,
            )
        )

    async def before(self, call: HeldCall) -> tuple[ExecutionRecord, Verdict]:
        """Before the call: the workspace must be observable; a tool only a later step uses
        moves the plan on; and the current step, when 🔴, has its checkpoint answered
        Continue before its first call runs (the first step included)."""
        record = call.record
        unobservable = await self._observer_ready(record)
        if unobservable is not None:
            return record, Verdict(
                f"Not run: the host cannot observe the workspace ({unobservable.reason}), "
                "so no change can be held to the plan.",
            )
        if call.commit_message is not None:
            await self._steps.commit_message(record, call.commit_message)
        held = hold_to_step(call.plan, record.current_step, call.tool, None)
        answer = None
        if isinstance(held, MovesOn):
            ended = record.current_step
            record, commit = await self._steps.move_on(record, call.plan, held.step, held.skipped)
            await self.resync(record.agent)
            if commit is not None and call.commit_message is not None:
                answer = f"Committed the work of step {ended + 1} as {commit[:12]}."
        step = record.current_step
        if (
            call.checkpoints
            and entering_checkpoint(call.plan, step)
            and not await self._steps.passed(record, step)
        ):
            why = await self._checkpoint(replace(call, record=record), step)
            if why is not None:
                return record, Verdict(_checkpoint_refused(step, why), stop=True)
        if answer is not None:
            await self._event(replace(call, record=record), ExecutionEventKind.COMMAND, ())
        return record, Verdict(answer=answer)

    async def after(self, call: HeldCall) -> Verdict:
        """After the call: observe, hold the changed paths to the current step, decide."""
        record = call.record
        observer = self._observers[record.agent][1]
        effects = await observer.observe()
        if isinstance(effects, Unobserved):
            return await self._unobserved(call, effects)
        changed, off_branch = await self._changed_paths(record, effects)
        allowed = call.allowed
        if allowed is not None and off_branch and allowed.leaves(record.branch):
            # Allowed to switch: the files it checked out are the step's; the branch stays
            # the execution's home, so the step can still be committed on it.
            await self._steps.branch_of(record.agent).reattach(branch_record(record))
            await self._repository.note_head(record.agent)
        if allowed is not None:
            observed = changed
            changed = tuple(path for path in changed if not allowed.covers(path))
            off_branch = off_branch and not allowed.leaves(record.branch)
            if not changed and not off_branch:
                await self._event(call, ExecutionEventKind.COMMAND, observed)
                return Verdict()
        if not changed and not off_branch:
            await self._event(call, ExecutionEventKind.COMMAND, ())
            return Verdict()
        everything = (*effects.paths, *effects.git_state)
        if off_branch:
            # Everything the call changed goes back with HEAD: a checkout's files too.
            reason = f"the call moved HEAD off the execution branch `{record.branch}`"
            drift = StepDrift(record.current_step, (".git/HEAD",), reason)
            return await self._drift(call, drift, changed, everything)
        held = hold_to_step(call.plan, record.current_step, call.tool, changed)
        if isinstance(held, WithinStep) or (call.drift_decided and allowed is None):
            await self._event(call, ExecutionEventKind.COMMAND, changed)
            return Verdict()
        if isinstance(held, MovesOn):
            return await self._moves_on(call, held, changed, everything)
        return await self._drift(call, held, changed, _to_restore(effects, held.outside or changed))

    async def resync(self, agent: str) -> None:
        """After the host changed the repository itself (a step commit): look again, so the
        host's own change is not taken for the next call's."""
        entry = self._observers.get(agent)
        if entry is not None:
            await entry[1].observe()
            await self._repository.note_head(agent)

    def forget(self, agent: str) -> None:
        entry = self._observers.pop(agent, None)
        if entry is not None:
            entry[1].close()
        self._repository.forget(agent)

    # -- the decisions --------------------------------------------------------------------

    async def _moves_on(
        self, call: HeldCall, held: MovesOn, changed: tuple[str, ...], restorable: tuple[str, ...]
    ) -> Verdict:
        if held.checkpoint and call.checkpoints:
            # The 🔴 step has not started: its change waits undone while the card asks.
            agent = call.record.agent
            why: str | None = "not asked, as the call's change could not be undone meanwhile"
            if await self._restore(agent, restorable, hold=True):
                why = await self._checkpoint(call, held.step)
                if why is None and not await self._reapply(agent):
                    why = "answered Continue, but the call's change could not be put back"
                elif why is not None:
                    await self._release(agent)
            if why is not None:
                await self._steps.move_on(call.record, call.plan, held.step, held.skipped)
                await self.resync(agent)
                return Verdict(_checkpoint_refused(held.step, why), stop=True)
        moved, _ = await self._steps.move_on(
            call.record, call.plan, held.step, held.skipped, changed
        )
        await self.resync(call.record.agent)
        await self._event(replace(call, record=moved), ExecutionEventKind.COMMAND, changed)
        return Verdict()

    async def _checkpoint(self, call: HeldCall, step: int) -> str | None:
        """None when an approver chose Continue; otherwise why the step may not start:
        Stop, nobody answering in time, or a card Discord would not show."""
        try:
            answer = await self._steps.checkpoint(
                call.record,
                call.plan,
                step,
                requested_by=call.requested_by,
                timeout_seconds=call.timeout_seconds,
                tool=call.tool,
                action=call.action,
            )
        except CardNotShown as exc:
            return f"not shown: {exc}"
        if answer:
            # A Continue counts only while the execution lasts: it may have ended while the
            # card waited (an operator's cancel from a shell).
            now = await self._executions.get(call.record.plan_id)
            if now is None or not now.running:
                ended = now.end_reason if now is not None and now.end_reason else "ended"
                return f"answered after execution had ended ({ended})"
            return None
        return "stopped" if answer is False else "nobody answered in time"

    async def _drift(
        self, call: HeldCall, held: StepDrift, changed: tuple[str, ...], restorable: tuple[str, ...]
    ) -> Verdict:
        outside = held.outside or changed
        if call.policy is DriftPolicy.LOG:
            await self._event(call, ExecutionEventKind.DRIFT, outside, held.reason, "logged")
            return Verdict()
        if call.policy is DriftPolicy.REFUSE:
            stopped = not await self._restore(call.record.agent, restorable)
            await self._event(
                call,
                ExecutionEventKind.DRIFT,
                outside,
                held.reason,
                "stopped" if stopped else "refused",
            )
            return Verdict(
                f"Refused and undone: {held.reason}. The changes to "
                f"{_listed(outside)} were restored. Keep to the current step's files; if the "
                "plan must change, submit an amendment with submit_plan.",
                stop=stopped,
            )
        diff = await self._repository.short_diff(call.record.agent, outside)
        answer = await self._notifier.ask_permission(
            PermissionRequest(
                agent=call.record.agent,
                action=call.action,
                tool_name=call.tool,
                summary=f"keep changes to {_listed(outside)}",
                requested_by=call.requested_by,
                timeout_seconds=call.timeout_seconds,
                outside_plan=f"{held.reason}\nchanged: {_listed(outside, 10)}\n{diff}",
            )
        )
        if answer:
            await self._event(call, ExecutionEventKind.DRIFT, outside, held.reason, "allowed")
            return Verdict()
        stopped = not await self._restore(call.record.agent, restorable)
        decision = "stopped" if stopped else "denied" if answer is False else "timed-out"
        await self._event(call, ExecutionEventKind.DRIFT, outside, held.reason, decision)
        who = "a human denied it" if answer is False else "nobody answered in time"
        return Verdict(
            f"Undone: {held.reason}; {who}, so the changes to {_listed(outside)} were "
            "restored as they were before the call.",
            stop=stopped,
        )

    async def _unobserved(self, call: HeldCall, effects: Unobserved) -> Verdict:
        self.forget(call.record.agent)
        reason = f"the host could not observe what the call changed: {effects.reason}"
        if call.policy is DriftPolicy.LOG:
            await self._event(call, ExecutionEventKind.DRIFT, (), reason, "logged")
            return Verdict()
        await self._event(call, ExecutionEventKind.DRIFT, (), reason, "stopped")
        return Verdict(
            f"Execution stopped: {reason}, so nothing it did can be held to the plan or undone.",
            stop=True,
        )

    # -- observation ----------------------------------------------------------------------

    async def _observer_ready(self, record: ExecutionRecord) -> Unobserved | None:
        entry = self._observers.get(record.agent)
        if entry is not None and entry[0] == record.plan_id:
            return None
        self.forget(record.agent)
        home = self._agents_dir / record.agent
        observer = WorkspaceObserver(
            home / "workspace",
            home / "observed",
            writable_elsewhere=self._sandbox.shared,
        )
        failed = await observer.start()
        if failed is not None:
            observer.close()
            return failed
        self._observers[record.agent] = (record.plan_id, observer)
        await self._repository.note_head(record.agent)
        return None

    async def _changed_paths(
        self, record: ExecutionRecord, effects: Effects
    ) -> tuple[tuple[str, ...], bool]:
        """The workspace paths the call changed, with those the repository's state says it
        committed or staged; and whether ``HEAD`` left the execution branch."""
        changed = set(effects.paths)
        off_branch = False
        if effects.git_state:
            recorded, off_branch = await self._repository.state_changes(record.agent, record.branch)
            changed |= recorded
        # A directory made or changed to hold a changed path is that path's change.
        parents = {p.rsplit("/", i)[0] for p in changed for i in range(1, p.count("/") + 1)}
        return tuple(sorted(changed - parents)), off_branch

    async def _restore(self, agent: str, paths: tuple[str, ...], *, hold: bool = False) -> bool:
        """Put ``paths`` back as before the call (``hold``: keeping the call's change for
        ``_reapply``); False (the observer dropped) when they could not be."""
        entry = self._observers.get(agent)
        if entry is None:
            return False
        try:
            await (entry[1].hold_back(paths) if hold else entry[1].restore(paths))
        except RestoreFailed as exc:
            log.warning("agent %s: %s", agent, exc)
            self.forget(agent)
            return False
        await self._repository.note_head(agent)
        return True

    async def _release(self, agent: str) -> None:
        entry = self._observers.get(agent)
        if entry is not None:
            await entry[1].release()

    async def _reapply(self, agent: str) -> bool:
        entry = self._observers.get(agent)
        if entry is None:
            return False
        try:
            await entry[1].reapply()
        except RestoreFailed as exc:
            log.warning("agent %s: %s", agent, exc)
            self.forget(agent)
            return False
        await self._repository.note_head(agent)
        return True

    async def _event(
        self,
        call: HeldCall,
        kind: ExecutionEventKind,
        paths: tuple[str, ...],
        reason: str | None = None,
        decision: str | None = None,
    ) -> None:
        """Record a command or a drift event of the current step; a drift is audited too."""
        if kind is ExecutionEventKind.DRIFT:
            record = call.record
            await self._audit.append_audit(
                AuditEntry(
                    at=self._clock.now(),
                    agent=record.agent,
                    actor=Actor.agent(record.agent).label,
                    action=AuditAction.DRIFT,
                    plan_id=record.plan_id,
                    revision=record.revision,
                    detail={
                        "call": call.action,
                        "why": f"{reason}: {_listed(paths, 10)}" if paths else reason,
                        "outcome": call.policy.value,
                        "decision": decision,
                        "step": record.current_step + 1,
                    },
                )
            )
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=call.record.plan_id,
                at=self._clock.now(),
                step=call.record.current_step + 1,
                kind=kind,
                tool=call.tool,
                action=call.action,
                paths=paths,
                reason=reason,
                decision=DriftDecision(decision) if decision else None,
            )
        )


def _to_restore(effects: Effects, outside: tuple[str, ...]) -> tuple[str, ...]:
    """What undoing a drift puts back: the workspace paths outside the step, and the
    repository's state when the drift is in it (a commit, a staged path, a moved HEAD)."""
    in_tree = [path for path in outside if path in effects.paths]
    if len(in_tree) < len(outside):
        return (*in_tree, *effects.git_state)
    return tuple(in_tree)


def _checkpoint_refused(step: int, why: str) -> str:
    return (
        f"Not run: step {step + 1} is high-risk and its checkpoint was {why}. Execution has "
        "ended with the steps so far kept; do not continue the plan."
    )


def _listed(paths: tuple[str, ...], most: int = 3) -> str:
    shown = ", ".join(f"`{p}`" for p in paths[:most])
    return shown + (f" and {len(paths) - most} more" if len(paths) > most else "")
