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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from plancord.agent.execution.drift_records import DriftRecords
from plancord.agent.execution.network import RefusedConnections
from plancord.agent.execution.network_asks import NetworkCalls
from plancord.agent.execution.observe import Effects, RestoreFailed, Unobserved, WorkspaceObserver
from plancord.agent.execution.repository import RepositoryLook
from plancord.agent.execution.starter import branch_record
from plancord.agent.execution.steps import StepKeeper
from plancord.agent.home import AgentHomes
from plancord.core.authority import Answer, Subject
from plancord.core.drift import DriftPolicy
from plancord.core.drift_findings import (
    NESTED_GIT_REASON,
    DriftAction,
    DriftFinding,
    FindingKind,
    answered,
    drift_action,
    listed_paths,
    nested_git_paths,
)
from plancord.core.errors import CardNotShown
from plancord.core.execution import (
    DriftDecision,
    ExecutionEvent,
    ExecutionEventKind,
    ExecutionRecord,
    StepIndex,
    step_number,
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
from plancord.core.ports import Clock, Notifier, PermissionRequest
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
    note: str | None = None
    """After the call, its effects kept: what the model is told besides (the connections
    the plan refused while it ran)."""


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
        homes: AgentHomes,
        network_calls: NetworkCalls | None = None,
    ) -> None:
        self._executions = executions
        self._steps = steps
        self._notifier = notifier
        self._clock = clock
        self._homes = homes
        self._observers: dict[str, tuple[str, WorkspaceObserver]] = {}
        self._repository = RepositoryLook(homes)
        self._refused = RefusedConnections(executions, network_calls)
        self._drifts = DriftRecords(executions, audit, clock)

    @property
    def drifts(self) -> DriftRecords:
        """Where a drift is written once decided, before the call (by the gate) or after
        it (here)."""
        return self._drifts

    async def running(self, agent: str) -> ExecutionRecord | None:
        return await self._executions.running(agent)

    @staticmethod
    def tool_drift(
        plan: Plan, record: ExecutionRecord, tool: str, writes: KnownWrites | None = None
    ) -> DriftFinding | None:
        """Before a call, judged by its tool and the writes it is known to make: the finding
        that no step from the current one on covers it (the gate applies the drift policy
        to it, so it is asked before it happens), or None. A move of ``HEAD`` off the
        execution branch is drift whatever the step's files say."""
        paths = writes.paths if writes is not None and writes.paths else None
        known = tuple(paths or ())
        held = hold_to_step(plan, record.current_step, tool, paths)
        if isinstance(held, StepDrift):
            return DriftFinding(FindingKind.TOOL, held.reason, known)
        if writes is not None and writes.leaves(record.branch):
            reason = f"the call would move HEAD off the execution branch `{record.branch}`"
            return DriftFinding(FindingKind.TOOL, reason, known)
        return None

    async def before(self, call: HeldCall) -> tuple[ExecutionRecord, Verdict]:
        """Before the call: the workspace must be observable; a tool only a later step uses
        moves the plan on; and the current step, when 🔴, has its checkpoint answered
        Continue before its first call runs (the first step included)."""
        record = call.record
        if self._homes.sandbox.proxy_socket(record.agent) is not None:
            await self._refused.mark(record)
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
                answer = f"Committed the work of step {step_number(ended)} as {commit[:12]}."
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
            await self._command(replace(call, record=record), ())
        return record, Verdict(answer=answer)

    async def after(self, call: HeldCall) -> Verdict:
        """After the call: observe, hold the changed paths to the current step, decide;
        the connections the plan refused meanwhile are told to the model."""
        verdict = await self._held_after(call)
        note = await self._refused.since(call.record)
        return verdict if note is None or verdict.error else replace(verdict, note=note)

    async def _held_after(self, call: HeldCall) -> Verdict:
        record = call.record
        observer = self._observers[record.agent][1]
        effects = await observer.observe()
        if isinstance(effects, Unobserved):
            return await self._unobserved(call, effects)
        nested = nested_git_paths(effects.paths)
        if not nested:
            return await self._held_effects(call, effects)
        # A git directory is the host's: undone first, then the rest of the call is held.
        finding = DriftFinding(FindingKind.GIT_DIRECTORY, NESTED_GIT_REASON, nested)
        refused = await self._drift(call, finding, nested)
        holding = {p.rsplit("/", i)[0] for p in nested for i in range(1, p.count("/") + 1)}
        left = tuple(c for c in effects.changes if c.path not in nested and c.path not in holding)
        rest = Effects(left, effects.git_state)
        later = Verdict() if refused.stop or rest.empty else await self._held_effects(call, rest)
        if later.stop or refused.stop:
            return later if later.stop else refused
        return Verdict("\n".join(e for e in (refused.error, later.error) if e) or None)

    async def _held_effects(self, call: HeldCall, effects: Effects) -> Verdict:
        record = call.record
        changed, off_branch = await self._changed_paths(record, effects)
        allowed = call.allowed
        if allowed is not None and off_branch and allowed.leaves(record.branch):
            # Allowed to switch: the files it checked out are the step's; the branch stays
            # the execution's home, so the step can still be committed on it.
            await self._homes.of(record.agent).branch.reattach(branch_record(record))
            await self._repository.note_head(record.agent)
        if allowed is not None:
            observed = changed
            changed = tuple(path for path in changed if not allowed.covers(path))
            off_branch = off_branch and not allowed.leaves(record.branch)
            if not changed and not off_branch:
                await self._command(call, observed)
                return Verdict()
        if not changed and not off_branch:
            await self._command(call, ())
            return Verdict()
        everything = (*effects.paths, *effects.git_state)
        if off_branch:
            # Everything the call changed goes back with HEAD: a checkout's files too.
            reason = f"the call moved HEAD off the execution branch `{record.branch}`"
            finding = DriftFinding(FindingKind.OBSERVED, reason, (".git/HEAD",))
            return await self._drift(call, finding, everything)
        held = hold_to_step(call.plan, record.current_step, call.tool, changed)
        if isinstance(held, WithinStep) or (call.drift_decided and allowed is None):
            await self._command(call, changed)
            return Verdict()
        if isinstance(held, MovesOn):
            return await self._moves_on(call, held, changed, everything)
        finding = DriftFinding(FindingKind.OBSERVED, held.reason, held.outside or changed)
        return await self._drift(call, finding, _to_restore(effects, finding.paths))

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
            if await self._hold_back(agent, restorable):
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
        await self._command(replace(call, record=moved), changed)
        return Verdict()

    async def _checkpoint(self, call: HeldCall, step: StepIndex) -> str | None:
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
        if answer is Answer.ALLOWED:
            # A Continue counts only while the execution lasts: it may have ended while the
            # card waited (an operator's cancel from a shell).
            now = await self._executions.get(call.record.plan_id)
            if now is None or not now.running:
                ended = now.end_reason if now is not None and now.end_reason else "ended"
                return f"answered after execution had ended ({ended})"
            return None
        return "stopped" if answer is Answer.DENIED else "nobody answered in time"

    async def _drift(
        self, call: HeldCall, finding: DriftFinding, restorable: tuple[str, ...]
    ) -> Verdict:
        """Apply the drift policy to what the call was observed to do (``drift_action``)."""
        action = drift_action(finding, call.policy)
        outside = finding.paths
        if action is DriftAction.LOG:
            await self._held_drift(call, finding, action, DriftDecision.LOGGED)
            return Verdict()
        if action is DriftAction.STOP:
            await self._held_drift(call, finding, action, DriftDecision.STOPPED)
            return Verdict(
                f"Execution stopped: {finding.reason}, so nothing it did can be held to the "
                "plan or undone.",
                stop=True,
            )
        if action is DriftAction.REFUSE:
            failed = await self._restore(call.record.agent, restorable)
            decision = DriftDecision.STOPPED if failed else DriftDecision.REFUSED
            await self._held_drift(call, finding, action, decision)
            if failed:
                return _not_put_back(f"Refused: {finding.reason}", failed)
            return Verdict(
                f"Refused and undone: {finding.reason}. The changes to "
                f"{listed_paths(outside)} were restored. Keep to the current step's files; if "
                "the plan must change, submit an amendment with submit_plan."
            )
        diff = await self._repository.short_diff(call.record.agent, outside)
        answer = await self._notifier.ask_permission(
            PermissionRequest(
                agent=call.record.agent,
                action=call.action,
                tool_name=call.tool,
                summary=f"keep changes to {listed_paths(outside)}",
                requested_by=call.requested_by,
                timeout_seconds=call.timeout_seconds,
                outside_plan=f"{finding.reason}\nchanged: {listed_paths(outside, 10)}\n{diff}",
                subject=Subject.DRIFT,
            )
        )
        if answer is Answer.ALLOWED:
            await self._held_drift(call, finding, action, DriftDecision.ALLOWED)
            return Verdict()
        failed = await self._restore(call.record.agent, restorable)
        await self._held_drift(
            call, finding, action, DriftDecision.STOPPED if failed else answered(answer)
        )
        who = "a human denied it" if answer is Answer.DENIED else "nobody answered in time"
        if failed:
            return _not_put_back(f"Denied: {finding.reason}; {who}", failed)
        return Verdict(
            f"Undone: {finding.reason}; {who}, so the changes to {listed_paths(outside)} were "
            "restored as they were before the call."
        )

    async def _unobserved(self, call: HeldCall, effects: Unobserved) -> Verdict:
        self.forget(call.record.agent)
        reason = f"the host could not observe what the call changed: {effects.reason}"
        return await self._drift(call, DriftFinding(FindingKind.UNOBSERVED, reason), ())

    # -- observation ----------------------------------------------------------------------

    async def _observer_ready(self, record: ExecutionRecord) -> Unobserved | None:
        entry = self._observers.get(record.agent)
        if entry is not None and entry[0] == record.plan_id:
            return None
        self.forget(record.agent)
        home = self._homes.of(record.agent)
        observer = WorkspaceObserver(
            home.workspace, home.observed, writable_elsewhere=home.sandbox.shared
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

    async def _restore(self, agent: str, paths: tuple[str, ...]) -> RestoreFailed | None:
        """Put ``paths`` back as before the call; the failure (the observer dropped) naming
        the paths that could not be."""
        return await self._put_back(agent, paths, lambda observer: observer.restore(paths))

    async def _hold_back(self, agent: str, paths: tuple[str, ...]) -> bool:
        """Put ``paths`` back as before the call, keeping the call's change for
        :meth:`_reapply`; False (the observer dropped) when they could not be."""
        held = await self._put_back(agent, paths, lambda observer: observer.hold_back(paths))
        return held is None

    async def _reapply(self, agent: str) -> bool:
        """Put back the change :meth:`_hold_back` kept; False (the observer dropped) when it
        could not be."""
        return await self._put_back(agent, (), lambda observer: observer.reapply()) is None

    async def _release(self, agent: str) -> None:
        entry = self._observers.get(agent)
        if entry is not None:
            await entry[1].release()

    async def _put_back(
        self,
        agent: str,
        paths: tuple[str, ...],
        change: Callable[[WorkspaceObserver], Awaitable[None]],
    ) -> RestoreFailed | None:
        """Make ``change`` to ``paths`` through the agent's observer and look at ``HEAD``
        again; a failure drops the observer (nothing more is held) and is returned."""
        entry = self._observers.get(agent)
        if entry is None:
            return RestoreFailed(paths, "the workspace is no longer observed")
        try:
            await change(entry[1])
        except RestoreFailed as exc:
            log.warning("agent %s: %s", agent, exc)
            self.forget(agent)
            return exc
        await self._repository.note_head(agent)
        return None

    async def _command(self, call: HeldCall, paths: tuple[str, ...]) -> None:
        """Record a command of the current step."""
        await self._executions.add_event(
            ExecutionEvent(
                plan_id=call.record.plan_id,
                at=self._clock.now(),
                step=step_number(call.record.current_step),
                kind=ExecutionEventKind.COMMAND,
                tool=call.tool,
                action=call.action,
                paths=paths,
            )
        )

    async def _held_drift(
        self, call: HeldCall, finding: DriftFinding, action: DriftAction, decision: DriftDecision
    ) -> None:
        await self.drifts.record(call.record, call.tool, call.action, finding, action, decision)


def _to_restore(effects: Effects, outside: tuple[str, ...]) -> tuple[str, ...]:
    """What undoing a drift puts back: the workspace paths outside the step, and the
    repository's state when the drift is in it (a commit, a staged path, a moved HEAD)."""
    in_tree = [path for path in outside if path in effects.paths]
    if len(in_tree) < len(outside):
        return (*in_tree, *effects.git_state)
    return tuple(in_tree)


def _checkpoint_refused(step: StepIndex, why: str) -> str:
    return (
        f"Not run: step {step_number(step)} is high-risk and its checkpoint was {why}. "
        "Execution has ended with the steps so far kept; do not continue the plan."
    )


def _not_put_back(what: str, failed: RestoreFailed) -> Verdict:
    """A drift undo that could not put every path back (the host's kept copies damaged or
    missing, a path it could not write): nothing claims the workspace is as it was."""
    return Verdict(
        f"{what}; {listed_paths(failed.paths, 10)} could not be put back, so the workspace "
        "keeps the call's changes there. Execution stopped.",
        stop=True,
    )
