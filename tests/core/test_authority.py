"""The authority: every (subject, act, role) pair answered by the one rule, refusals that
name it, and the audit rows of refusals, decisions and drift in one format."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from plancord.core.agents import AgentRecord
from plancord.core.authority import (
    ACTS,
    APPROVING,
    MISPLACED,
    Act,
    Answer,
    AuditPlace,
    Decision,
    Refusal,
    Standing,
    Subject,
    decision_row,
    describe_ask_deciders,
    judge,
    refusal_row,
    refused_row,
)
from plancord.core.drift import DriftPolicy
from plancord.core.drift_findings import (
    DriftAction,
    DriftFinding,
    DriftPlace,
    FindingKind,
    answered,
    drift_action,
    drift_row,
)
from plancord.core.execution import DriftDecision, StepNumber, step_index, step_number
from plancord.core.places import Place
from plancord.core.planning import Actor, AuditAction, PlanningState
from plancord.core.results import ResultAction
from plancord.core.settings import Access, ApprovalPolicy, PlanModeSettings

AT = datetime(2026, 1, 1, tzinfo=UTC)
APPROVER_ROLE = "900"
ACCESS_ROLE = "901"

ROLES = {
    "requester": Actor.user(1, "ana"),
    "approver": Actor.user(2, "bob", roles=frozenset({APPROVER_ROLE})),
    "admin": Actor.user(3, "boss", is_admin=True),
    "member": Actor.user(4, "eve"),
    "creator": Actor.user(5, "cat"),
    "instructor": Actor.user(6, "ivy", roles=frozenset({ACCESS_ROLE})),
    "operator": Actor.operator(),
    "agent": Actor.agent("ada"),
    "scheduler": Actor.scheduler(),
    "policy": Actor.policy("execution"),
}

DECIDERS = {"approver", "admin", "operator"}
"""Who may take any act on work someone else asked for, under either approval policy."""

INSTRUCTORS = {"admin", "creator", "instructor", "operator"}
"""Who may answer the agent's questions, or instruct it, under the scene's access list."""

PAIRS = [(subject, act) for subject, acts in ACTS.items() for act in acts]


def standing(policy: ApprovalPolicy) -> Standing:
    settings = PlanModeSettings(
        approver_roles=(APPROVER_ROLE,),
        approval=policy,
        access=Access(roles=(ACCESS_ROLE,)),
    )
    requester = PlanningState(agent="ada", requested_by="1", requested_by_name="ana")
    agent = AgentRecord(
        name="ada", channel_id=10, guild_id=20, model="m", created_by="user:5(cat)", created_at=AT
    )
    return Standing(requester, settings, agent)


def expected(subject: Subject, act: Act, role: str, policy: ApprovalPolicy) -> bool:
    if subject in (Subject.QUESTION, Subject.AGENT, Subject.SCHEDULE):
        return role in INSTRUCTORS
    if role == "requester":
        return not (policy is ApprovalPolicy.APPROVER and act in APPROVING)
    return role in DECIDERS


@pytest.mark.parametrize("policy", list(ApprovalPolicy))
@pytest.mark.parametrize("role", list(ROLES))
@pytest.mark.parametrize(("subject", "act"), PAIRS)
def test_every_subject_act_and_role_is_answered_by_the_rule(
    subject: Subject, act: Act, role: str, policy: ApprovalPolicy
) -> None:
    actor = ROLES[role]
    verdict = judge(actor, subject, act, standing(policy))
    if expected(subject, act, role, policy):
        assert verdict == Decision(subject, act, actor)
    else:
        assert isinstance(verdict, Refusal)
        assert (verdict.subject, verdict.act, verdict.actor) == (subject, act, actor)
        assert verdict.rule and verdict.text


@pytest.mark.parametrize("role", list(ROLES))
@pytest.mark.parametrize(("subject", "act"), PAIRS)
def test_when_the_standing_cannot_be_read_only_administrators_decide(
    subject: Subject, act: Act, role: str
) -> None:
    verdict = judge(ROLES[role], subject, act, None)
    assert isinstance(verdict, Decision) is (role in ("admin", "operator"))
    if isinstance(verdict, Refusal):
        assert "administrators" in verdict.text


def test_every_subject_offers_its_acts_and_nothing_else() -> None:
    assert set(ACTS) == set(Subject)
    with pytest.raises(ValueError, match="offers no 'merge'"):
        judge(ROLES["admin"], Subject.PLAN, Act.MERGE, standing(ApprovalPolicy.APPROVER))


@pytest.mark.parametrize(
    ("subject", "act", "text"),
    [
        (Subject.PLAN, Act.APPROVE, "You cannot approve this plan: the four-eyes rule"),
        (Subject.RESULT, Act.MERGE, "You cannot merge this result: the four-eyes rule"),
        (Subject.PERMISSION, Act.ALLOW, "You cannot allow this: the four-eyes rule"),
        (Subject.DRIFT, Act.ALLOW, "You cannot allow this: the four-eyes rule"),
        (Subject.CHECKPOINT, Act.CONTINUE, "You cannot continue this: the four-eyes rule"),
    ],
)
def test_the_four_eyes_refusal_names_the_rule_and_what_stays_open(
    subject: Subject, act: Act, text: str
) -> None:
    verdict = judge(ROLES["requester"], subject, act, standing(ApprovalPolicy.APPROVER))
    assert isinstance(verdict, Refusal) and verdict.text.startswith(text)
    if subject in (Subject.PERMISSION, Subject.DRIFT):
        assert verdict.text.endswith("Deny stays open to you.")
    if subject is Subject.CHECKPOINT:
        assert verdict.text.endswith("Stop stays open to you.")


@pytest.mark.parametrize(
    ("subject", "act", "text"),
    [
        (
            Subject.PLAN,
            Act.REJECT,
            "Only the requester (ana), members with an approver role or server administrators "
            "can reject this plan.",
        ),
        (
            Subject.RESULT,
            Act.ROLL_BACK,
            "Only the requester (ana), members with an approver role or server administrators "
            "can roll back this result.",
        ),
        (
            Subject.PERMISSION,
            Act.DENY,
            "Only the member who gave the agent this task, members with an approver role or "
            "server administrators can decide this request.",
        ),
        (Subject.QUESTION, Act.ANSWER, "Only members who may instruct **ada** can answer"),
    ],
)
def test_someone_outside_the_list_is_told_who_may(subject: Subject, act: Act, text: str) -> None:
    verdict = judge(ROLES["member"], subject, act, standing(ApprovalPolicy.REQUESTER_OR_APPROVER))
    assert isinstance(verdict, Refusal) and verdict.text.startswith(text)


def test_the_deciders_of_an_ask_are_said_from_the_policy_in_force() -> None:
    asker = "the member who gave the agent this task"
    with_roles = PlanModeSettings(approver_roles=(APPROVER_ROLE,))
    assert describe_ask_deciders(with_roles) == (
        f"{asker}, members with an approver role or server administrators"
    )
    assert describe_ask_deciders(PlanModeSettings()) == f"{asker} or server administrators"
    assert describe_ask_deciders(None) == "server administrators"
    for settings in (with_roles, PlanModeSettings()):
        requester = PlanningState(agent="ada", requested_by="1")
        verdict = judge(ROLES["member"], Subject.DRIFT, Act.DENY, Standing(requester, settings))
        assert isinstance(verdict, Refusal)
        assert verdict.text == f"Only {describe_ask_deciders(settings)} can decide this request."


def test_refusal_and_decision_rows_share_one_format() -> None:
    verdict = judge(ROLES["member"], Subject.RESULT, Act.PUSH, standing(ApprovalPolicy.APPROVER))
    assert isinstance(verdict, Refusal)
    place = AuditPlace("ada", "p1", 2)
    refused = refused_row(verdict, place, AT, {"version": 3})
    assert refused.action is AuditAction.RESULT_REFUSED
    assert (refused.agent, refused.plan_id, refused.revision) == ("ada", "p1", 2)
    assert refused.actor == "user:4(eve)"
    assert refused.detail == {
        "subject": "result",
        "act": "push",
        "version": 3,
        "why": verdict.rule,
    }
    decided = decision_row(
        AuditAction.RESULT_PUSH, ROLES["admin"], place, AT, {"version": 3}, subject=Subject.RESULT
    )
    assert decided.detail == {"subject": "result", "version": 3}
    plan = refusal_row(Subject.PLAN, Act.APPROVE, ROLES["admin"], AuditPlace("ada"), AT, "stale")
    assert plan.action is AuditAction.DECISION_REFUSED
    assert plan.detail == {"subject": "plan", "act": "approve", "why": "stale"}
    ask = refusal_row(Subject.CHECKPOINT, Act.CONTINUE, ROLES["member"], place, AT, "no")
    assert ask.action is AuditAction.ASK_REFUSED


def test_answers_keep_their_stored_audit_actions() -> None:
    assert [a.audit_action.value for a in Answer] == [
        "permission-allowed",
        "permission-denied",
        "permission-timed-out",
        "permission-not-shown",
    ]
    assert Decision(Subject.CHECKPOINT, Act.CONTINUE, ROLES["admin"]).answer is Answer.ALLOWED
    assert Decision(Subject.CHECKPOINT, Act.STOP, ROLES["admin"]).answer is Answer.DENIED
    assert answered(Answer.NOT_SHOWN) is DriftDecision.STOPPED
    assert answered(Answer.TIMED_OUT) is DriftDecision.TIMED_OUT


def test_result_actions_are_the_cards_acts_and_keep_their_stored_audit_text() -> None:
    assert [a.act for a in ResultAction] == list(ACTS[Subject.RESULT])
    assert [a.audit.value for a in ResultAction] == [
        "result-merge",
        "result-discard",
        "result-roll-back",
        "result-push",
    ]
    assert [a.label for a in ResultAction] == ["Merge", "Discard", "Roll back", "Push"]
    # A vote and a refused click are audit rows only, under the texts they always had.
    assert AuditAction.RESULT_MERGE_VOTE.value == "result-merge-vote"
    assert AuditAction.RESULT_REFUSED.value == "result-refused"


@pytest.mark.parametrize(
    ("kind", "policy", "action"),
    [
        (FindingKind.TOOL, DriftPolicy.ASK, DriftAction.ASK),
        (FindingKind.TOOL, DriftPolicy.REFUSE, DriftAction.REFUSE),
        (FindingKind.TOOL, DriftPolicy.LOG, DriftAction.LOG),
        (FindingKind.OBSERVED, DriftPolicy.ASK, DriftAction.ASK),
        (FindingKind.OBSERVED, DriftPolicy.REFUSE, DriftAction.REFUSE),
        (FindingKind.OBSERVED, DriftPolicy.LOG, DriftAction.LOG),
        (FindingKind.UNOBSERVED, DriftPolicy.ASK, DriftAction.STOP),
        (FindingKind.UNOBSERVED, DriftPolicy.REFUSE, DriftAction.STOP),
        (FindingKind.UNOBSERVED, DriftPolicy.LOG, DriftAction.LOG),
        (FindingKind.HOST, DriftPolicy.ASK, DriftAction.ASK),
        (FindingKind.HOST, DriftPolicy.REFUSE, DriftAction.REFUSE),
        (FindingKind.HOST, DriftPolicy.LOG, DriftAction.LOG),
        (FindingKind.BOUND, DriftPolicy.ASK, DriftAction.REFUSE),
        (FindingKind.BOUND, DriftPolicy.REFUSE, DriftAction.REFUSE),
        (FindingKind.BOUND, DriftPolicy.LOG, DriftAction.REFUSE),
    ],
)
def test_one_function_picks_the_action_for_every_finding(
    kind: FindingKind, policy: DriftPolicy, action: DriftAction
) -> None:
    assert drift_action(DriftFinding(kind, "outside"), policy) is action


def test_a_drift_row_has_one_shape_whenever_it_was_found() -> None:
    place = DriftPlace("ada", "p1", 1, step_number(0), "tool:create_file:evil.py")
    finding = DriftFinding(FindingKind.OBSERVED, "not in step 1's files", ("evil.py",))
    row = drift_row(finding, DriftAction.ASK, DriftDecision.DENIED, place, AT)
    assert row.action is AuditAction.DRIFT and row.actor == "agent:ada"
    assert row.detail == {
        "finding": "observed",
        "call": "tool:create_file:evil.py",
        "why": "not in step 1's files: `evil.py`",
        "outcome": "ask",
        "decision": "denied",
        "step": 1,
    }
    before = drift_row(DriftFinding(FindingKind.TOOL, "tool"), DriftAction.LOG, None, place, AT)
    assert set(before.detail) == set(row.detail) and before.detail["decision"] is None


def test_step_numbers_and_indexes_are_each_others_inverse() -> None:
    assert step_number(0) == StepNumber(1)
    assert step_index(step_number(4)) == 4


HOME = Place(guild="20", channel="10")
ELSEWHERE = {
    "another server": Place(guild="21", channel="10"),
    "another channel": Place(guild="20", channel="11"),
    "a thread of another channel": Place(guild="20", channel="12", parent="11"),
    "a direct message": Place(guild=None, channel="10"),
    "an unknown channel": Place(guild="20", channel=""),
}


@pytest.mark.parametrize("where", list(ELSEWHERE))
@pytest.mark.parametrize(("subject", "act"), PAIRS)
def test_an_act_from_anywhere_but_the_agents_home_is_refused_whoever_acts(
    subject: Subject, act: Act, where: str
) -> None:
    admin = ROLES["admin"].model_copy(update={"place": ELSEWHERE[where]})
    verdict = judge(admin, subject, act, standing(ApprovalPolicy.REQUESTER_OR_APPROVER))
    assert isinstance(verdict, Refusal)
    assert verdict.rule == MISPLACED
    row = refused_row(verdict, AuditPlace("ada"), AT)
    assert row.detail["why"] == MISPLACED
    assert row.detail["place"]["channel"] == ELSEWHERE[where].channel


@pytest.mark.parametrize(
    "place", [HOME, Place(guild="20", channel="13", parent="10")], ids=["channel", "thread"]
)
@pytest.mark.parametrize(("subject", "act"), PAIRS)
def test_the_agents_channel_and_its_threads_are_its_home(
    subject: Subject, act: Act, place: Place
) -> None:
    admin = ROLES["admin"].model_copy(update={"place": place})
    verdict = judge(admin, subject, act, standing(ApprovalPolicy.REQUESTER_OR_APPROVER))
    assert verdict == Decision(subject, act, admin)


def test_a_placed_act_without_the_agent_or_its_standing_is_refused() -> None:
    admin = ROLES["admin"].model_copy(update={"place": HOME})
    settings = standing(ApprovalPolicy.REQUESTER_OR_APPROVER)
    homeless = Standing(settings.requester, settings.settings)
    for given in (homeless, None):
        verdict = judge(admin, Subject.PERMISSION, Act.ALLOW, given)
        assert isinstance(verdict, Refusal)
    assert judge(ROLES["operator"], Subject.PERMISSION, Act.ALLOW, homeless) == Decision(
        Subject.PERMISSION, Act.ALLOW, ROLES["operator"]
    )
