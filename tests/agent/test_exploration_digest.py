"""The digest of what the agent explored: every call a line, cited result lines, bounded."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from plancord.agent.plan_review import exploration_digest
from plancord.agent.plan_review.digest import cited_terms
from plancord.core.plan import validate_plan

PLAN = validate_plan(
    {
        "summary": "Fix the parser",
        "steps": [
            {"description": "Change `parse_header` to accept tabs.", "files": ["src/parse.py"]},
            {"description": "Add tests.", "files": ["tests/parser/*.py"]},
        ],
        "context_notes": "The bug is in `split_fields`.",
    }
)


def call(tool_use_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": arguments}


def result(tool_use_id: str, content: Any, *, is_error: bool = False) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if is_error:
        block["is_error"] = True
    return block


def turn(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": role, "content": list(blocks)}


def test_the_terms_a_plan_cites() -> None:
    assert cited_terms(PLAN) == (
        "src/parse.py",
        "parse.py",
        "parse_header",
        "tests/parser",
        "parser",
        "split_fields",
    )


def test_each_call_is_a_line_and_only_cited_result_lines_follow() -> None:
    messages = [
        turn("user", {"type": "text", "text": "fix the parser"}),
        turn(
            "assistant",
            {"type": "text", "text": "Let me look."},
            call("t1", "grep", pattern="def "),
            call("t2", "view", path="missing.py"),
        ),
        turn(
            "user",
            result("t1", "src/parse.py:3:def parse_header(line):\nsrc/other.py:1:def unrelated():"),
            result("t2", "no such file", is_error=True),
        ),
        turn("assistant", call("t3", "view", path="src/parse.py")),
        turn(
            "user",
            result(
                "t3",
                [{"type": "text", "text": "import re\n\ndef split_fields(text):\n    return 1"}],
            ),
        ),
        turn("assistant", call("t4", "bash", command="ls")),
    ]
    assert exploration_digest(messages, PLAN).splitlines() == [
        '1. grep {"pattern":"def "} → 70 chars, 2 lines',
        "   | src/parse.py:3:def parse_header(line):",
        '2. view {"path":"missing.py"} → error: no such file',
        '3. view {"path":"src/parse.py"} → 47 chars, 4 lines',
        "   | def split_fields(text):",
        '4. bash {"command":"ls"} → no result',
    ]


def test_no_calls_no_digest() -> None:
    assert exploration_digest([turn("user", {"type": "text", "text": "hi"})], PLAN) == ""


def _exploration(count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for n in range(count):
        messages.append(turn("assistant", call(f"t{n}", "view", path=f"src/parse.py#{n}")))
        messages.append(turn("user", result(f"t{n}", f"def parse_header_{n}():\n" * 20)))
    return messages


def test_over_budget_the_oldest_excerpts_go_first_then_the_oldest_calls() -> None:
    messages = _exploration(30)
    full = exploration_digest(messages, PLAN, max_chars=1_000_000)
    medium = exploration_digest(messages, PLAN, max_chars=3000)
    assert len(medium) <= 3000 < len(full)
    lines = medium.splitlines()
    assert lines[0].startswith("1. view") and lines[1].startswith("2. view"), "no excerpt left"
    assert lines[-1].startswith("   | def parse_header_29"), "the newest keep theirs"
    small = exploration_digest(messages, PLAN, max_chars=1000)
    assert len(small) <= 1000
    assert small.splitlines()[0].endswith("earlier tool calls left out to fit)")
    assert small.splitlines()[-1].startswith("30. view")


@given(st.integers(min_value=0, max_value=40), st.integers(min_value=50, max_value=20_000))
def test_the_digest_never_exceeds_its_budget(count: int, budget: int) -> None:
    assert len(exploration_digest(_exploration(count), PLAN, max_chars=budget)) <= budget


@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["user", "assistant"]),
                "content": st.lists(
                    st.dictionaries(
                        st.sampled_from(["type", "id", "tool_use_id", "name", "input", "content"]),
                        st.none()
                        | st.text()
                        | st.integers()
                        | st.sampled_from(["tool_use", "tool_result"]),
                    ),
                    max_size=3,
                ),
            }
        ),
        max_size=6,
    )
)
def test_any_stored_shape_is_read_without_a_crash(messages: list[dict[str, Any]]) -> None:
    assert isinstance(exploration_digest(messages, PLAN, max_chars=2000), str)
