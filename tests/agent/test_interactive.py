"""ask_user: answered, unanswered, and runs nobody can answer."""

from __future__ import annotations

from plancord.agent.tools.base import ToolContext
from plancord.agent.tools.interactive import AskUserTool
from plancord.core.ports import Question

from .conftest import FakeNotifier, MakeCtx, call

ASK = AskUserTool()


async def test_the_answer_comes_back(ctx: ToolContext, fake_notifier: FakeNotifier) -> None:
    fake_notifier.answer = "Use PostgreSQL."
    result = await call(ASK, ctx, question="SQLite or PostgreSQL?")
    assert not result.is_error
    assert result.content == "The user answered: Use PostgreSQL."
    assert fake_notifier.questions == [
        Question(agent="ada", text="SQLite or PostgreSQL?", requested_by="42", timeout_seconds=600)
    ]


async def test_no_answer_in_time(make_ctx: MakeCtx, fake_notifier: FakeNotifier) -> None:
    result = await call(ASK, make_ctx(ask_timeout_seconds=300, requester=None), question="?")
    assert not result.is_error
    assert result.content == "no answer (the user did not reply within 5 minutes)"
    assert fake_notifier.questions[0].requested_by is None


async def test_nobody_can_answer(make_ctx: MakeCtx, fake_notifier: FakeNotifier) -> None:
    result = await call(ASK, make_ctx(interactive=False), question="Which one?")
    assert result.is_error
    assert "Nobody can answer in this run" in result.content
    assert fake_notifier.questions == []
