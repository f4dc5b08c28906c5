"""Plan rendering against Discord's limits: worked examples, a 50-step plan near the 8 KiB
plan limit, and random plans (any size the plan schema allows, any outcome) that must never
break a limit, raise, or lose a word without saying so and attaching the full plan."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import discord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancord.core.errors import PlanValidationError
from plancord.core.plan import (
    MAX_CONTEXT_NOTES_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_QUESTION_CHARS,
    MAX_QUESTIONS,
    MAX_STEPS,
    MAX_SUMMARY_CHARS,
    MAX_TOOL_NAME_CHARS,
    Plan,
    validate_plan,
)
from plancord.core.planning import (
    ApprovalMode,
    PlanningState,
    PlanRevision,
    StepProgress,
    StepStatus,
)
from plancord.core.service import PlanningStatus
from plancord.core.settings import PlanModeSettings
from plancord.discord_bot.plan_card.embed import Outcome, Supersession, render_plan
from plancord.discord_bot.plan_card.status import Finish, render_progress, render_status
from plancord.discord_bot.shared.embed_basics import RISK_MARK, clip, size
from tests.discord_bot.plans import assert_within_limits, fifty_step_plan

AT = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def revision_of(plan: Plan, number: int = 1) -> PlanRevision:
    return PlanRevision(
        agent="ada",
        plan_id="0123456789abcdef",
        revision=number,
        plan=plan,
        markdown=plan.to_markdown(),
        sha256=plan.sha256(),
        submitted_at=AT,
    )


def shown_text(embeds: list[discord.Embed]) -> str:
    parts = []
    for embed in embeds:
        parts += [embed.title or "", embed.description or ""]
        parts += [f"{f.name}\n{f.value}" for f in embed.fields]
    return "\n".join(parts)


def test_a_small_plan_shows_everything_and_needs_no_file() -> None:
    plan = validate_plan(
        {
            "summary": "Add a greeting",
            "steps": [
                {"description": "Write greet.py", "tools": ["create_file"], "risk": "low"},
                {"description": "Delete old.py", "tools": ["bash_execute"], "risk": "high"},
            ],
            "questions": ["Which name?"],
            "context_notes": "Nothing else uses old.py.",
        }
    )
    revision = revision_of(plan)

    rendered = render_plan(revision, requested_by="ana")

    assert not rendered.overflow
    [embed] = rendered.embeds
    assert embed.title == "Plan: Add a greeting"
    assert embed.description == "**Context notes**\nNothing else uses old.py."
    assert [(f.name, f.value) for f in embed.fields] == [
        ("🟢 Step 1 · low risk", "Write greet.py\nTools: `create_file`"),
        ("🔴 Step 2 · high risk", "Delete old.py\nTools: `bash_execute`"),
        ("❓ Open questions", "1. Which name?"),
    ]
    assert embed.footer.text == f"v1 · {revision.sha8} · requested by ana"
    assert embed.colour == discord.Colour.blurple()


def test_outcomes_and_supersession_show_who_what_and_when() -> None:
    revision = revision_of(validate_plan({"summary": "S", "steps": [{"description": "d"}]}))
    outcome = Outcome("changes-requested", "ana", AT, "use a name")

    rendered = render_plan(
        revision,
        requested_by="ana",
        outcome=outcome,
        superseded=Supersession(2, "https://discord.com/channels/1/2/3"),
    )

    [embed] = rendered.embeds
    assert (embed.description or "").splitlines()[:2] == [
        f"✏️ **Changes requested** by ana <t:{int(AT.timestamp())}:R>: use a name",
        "⏭ **Superseded by [v2](https://discord.com/channels/1/2/3)**",
    ]
    assert embed.footer.text == (
        f"v1 · {revision.sha8} · requested by ana · changes requested by ana · "
        "2026-01-05 09:30 UTC · superseded by v2"
    )
    assert embed.timestamp == AT
    timed_out = render_plan(revision, requested_by=None, outcome=Outcome("timed-out", None, AT))
    assert (timed_out.embeds[0].description or "").startswith(
        "⌛ **Timed out — planning cancelled** <t:"
    )


def test_a_fifty_step_plan_near_8_kib_fits_with_the_file_attached() -> None:
    plan = fifty_step_plan()
    assert 7800 < plan.size_bytes() <= 8192
    revision = revision_of(plan)

    rendered = render_plan(
        revision, requested_by="ana", outcome=Outcome("approved", "ana", AT, "fresh context")
    )

    assert_within_limits(rendered.embeds)
    assert rendered.overflow
    assert rendered.filename == "plan-v1.md"
    assert rendered.markdown == revision.markdown
    steps = [f for e in rendered.embeds for f in e.fields if " Step " in (f.name or "")]
    assert [f.name for f in steps][:3] == [
        "🟡 Step 1 · medium risk",
        "🔴 Step 2 · high risk",
        "🟢 Step 3 · low risk",
    ]
    assert len(steps) == 50
    assert all((f.value or "").startswith(f"Step {n}: update") for n, f in enumerate(steps, 1))
    assert "The whole plan is attached as `plan-v1.md`" in (rendered.embeds[0].description or "")
    attached = rendered.file()
    assert attached.filename == "plan-v1.md"
    assert attached.fp.read().decode() == revision.markdown


def test_progress_and_status_of_a_fifty_step_plan_stay_within_limits() -> None:
    revision = revision_of(fifty_step_plan())
    steps = [StepProgress(status=s) for s in list(StepStatus) * 13][:50]
    for finish in (None, Finish("completed"), Finish("cancelled", "ana")):
        embed = render_progress(
            revision, steps, approved_by="ana", mode=ApprovalMode.CONFIRM_EACH_EDIT, finish=finish
        )
        assert_within_limits([embed])
        assert len((embed.description or "").splitlines()) == 50
    state = PlanningState(
        agent="ada",
        phase="executing",
        task="t" * 3000,
        requested_by="1",
        requested_by_name="ana",
        entered_at=AT,
        plan_id=revision.plan_id,
        revision=1,
        approved_by="1",
        approved_by_name="ana",
        approved_at=AT,
        approval_mode=ApprovalMode.FRESH_CONTEXT,
        steps=tuple(steps),
    )
    status = render_status("ada", PlanningStatus(state, revision, PlanModeSettings()))
    assert_within_limits([status])


def test_clip_never_exceeds_its_limit_nor_splits_an_emoji() -> None:
    assert clip("🟢🟢🟢", 4) == "🟢…"
    assert size(clip("🟢🟢🟢", 4)) <= 4
    assert clip("abc", 3) == "abc"
    assert clip("abcd", 3) == "ab…"


# -- random plans --------------------------------------------------------------------------

WORD = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp", "Cf")),
    min_size=1,
    max_size=24,
)
TRICKY = st.sampled_from(["**bold**", "`code`", "@everyone", "🟢", "日本語", "Cafe\u0301", "\n"])


def text(max_size: int) -> st.SearchStrategy[str]:
    short = st.lists(st.one_of(WORD, TRICKY), min_size=1, max_size=8).map(" ".join)
    long = st.builds(lambda word, n: " ".join([word] * n), WORD, st.integers(1, max_size))
    # A plan's texts must not be blank (validation refuses those): keep every example valid,
    # so each one checks what is shown.
    return st.one_of(short, long).map(lambda t: t[:max_size]).filter(lambda t: t.strip() != "")


STEPS = st.fixed_dictionaries(
    {
        "description": text(MAX_DESCRIPTION_CHARS),
        "tools": st.lists(
            st.text(alphabet="abcdefgh_", min_size=1, max_size=MAX_TOOL_NAME_CHARS), max_size=20
        ),
        "risk": st.sampled_from(["low", "medium", "high"]),
    }
)
PLANS = st.fixed_dictionaries(
    {
        "summary": text(MAX_SUMMARY_CHARS),
        "steps": st.one_of(
            st.lists(STEPS, min_size=1, max_size=6),
            st.lists(STEPS, min_size=MAX_STEPS - 10, max_size=MAX_STEPS),
        ),
        "questions": st.lists(text(MAX_QUESTION_CHARS), max_size=MAX_QUESTIONS),
        "context_notes": text(MAX_CONTEXT_NOTES_CHARS),
    }
)
OUTCOMES = st.one_of(
    st.none(),
    st.builds(
        Outcome,
        st.sampled_from(["approved", "changes-requested", "rejected", "cancelled", "timed-out"]),
        st.one_of(st.none(), WORD),
        st.just(AT),
        st.one_of(st.none(), text(2000)),
    ),
)
SUPERSESSIONS = st.one_of(
    st.none(), st.builds(Supersession, st.integers(2, 10**6), st.just("https://d.c/1/2/3"))
)


def assert_a_faithful_prefix(embeds: list[discord.Embed], plan: Plan) -> None:
    """A plan too large for the embed shows its first steps in order, each whole or cut short
    with "…", and names the steps that are only in the attached file."""
    fields = [field for embed in embeds for field in embed.fields if " Step " in field.name]
    for number, (field, step) in enumerate(zip(fields, plan.steps, strict=False), start=1):
        assert field.name == f"{RISK_MARK[step.risk]} Step {number} · {step.risk.value} risk"
        whole = step.description
        if step.tools:
            whole += "\nTools: " + ", ".join(f"`{tool}`" for tool in step.tools)
        value = field.value or ""
        assert value == whole or (value.endswith("…") and whole.startswith(value[:-1])), number
    if len(fields) < len(plan.steps):
        assert f"of {len(plan.steps)} are only in the file" in (embeds[0].description or "")


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    data=PLANS,
    outcome=OUTCOMES,
    superseded=SUPERSESSIONS,
    requested_by=st.one_of(st.none(), WORD),
)
def test_any_plan_renders_within_every_limit_and_says_what_it_left_out(
    data: dict[str, Any],
    outcome: Outcome | None,
    superseded: Supersession | None,
    requested_by: str | None,
) -> None:
    try:
        plan = validate_plan(data, max_plan_bytes=1_048_576)
    except PlanValidationError:
        return
    revision = revision_of(plan)

    rendered = render_plan(
        revision, requested_by=requested_by, outcome=outcome, superseded=superseded
    )

    assert_within_limits(rendered.embeds)
    if rendered.overflow:
        assert "attached as `plan-v1.md`" in (rendered.embeds[0].description or "")
        assert rendered.markdown == revision.markdown
        assert_a_faithful_prefix(rendered.embeds, plan)
        return
    shown = shown_text(rendered.embeds)
    assert rendered.embeds[0].title == f"Plan: {plan.summary}"
    for step in plan.steps:
        assert step.description in shown
        for tool in step.tools:
            assert f"`{tool}`" in shown
    for question in plan.questions:
        assert question in shown
    assert plan.context_notes in shown
