"""Splitting agent text into Discord messages: the limit, line boundaries, code blocks."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancord.discord_bot.shared.channel_io import fences_balanced, split_message, split_parts

ADDED_PREFIX = re.compile(r"```[A-Za-z0-9_+#.-]*\n")


def test_short_text_is_one_message() -> None:
    assert split_message("hello\nworld") == ["hello\nworld"]
    assert split_message("") == []


def test_splits_on_line_boundaries() -> None:
    lines = [f"line {i:04d} " + "x" * 80 for i in range(60)]
    text = "\n".join(lines)

    chunks = split_message(text)

    assert len(chunks) > 1
    assert all(len(c) <= 2000 for c in chunks)
    assert "".join(chunks) == text
    for chunk in chunks[:-1]:
        assert chunk.endswith("\n")


def test_a_line_longer_than_a_message_is_cut_hard() -> None:
    text = "y" * 4500

    chunks = split_message(text)

    assert [len(c) for c in chunks] == [1996, 1996, 508]
    assert "".join(chunks) == text


def test_an_open_code_block_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"print({i})  # " + "z" * 60 for i in range(50))
    text = f"Here is the script:\n```python\n{code}\n```\nRun it."

    chunks = split_message(text)

    assert len(chunks) == 2
    assert chunks[0].endswith("\n```")
    assert chunks[1].startswith("```python\n")
    assert all(fences_balanced(c) for c in chunks)
    assert chunks[1].endswith("```\nRun it.")


def test_a_long_line_inside_a_code_block_keeps_the_block_on_both_sides() -> None:
    text = "```\n" + "q" * 3000 + "\n```"

    chunks = split_message(text)

    assert all(len(c) <= 2000 and fences_balanced(c) for c in chunks)
    assert chunks[1].startswith("```\n")


def test_an_unclosed_block_is_closed_in_the_last_message() -> None:
    assert split_message("```sh\nls") == ["```sh\nls\n```"]


def test_a_one_line_block_does_not_open_a_fence() -> None:
    text = "```inline```\n" * 200
    assert all(fences_balanced(c) and not c.endswith("\n```") for c in split_message(text))


def test_limit_must_leave_room_for_fences() -> None:
    with pytest.raises(ValueError, match="at least"):
        split_message("text", limit=10)


PIECES = st.sampled_from(
    ["```", "```py", "```c++", "``` ", "   ```", "\n", "\n\n", "a", "word ", "`", "x" * 37, "é"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=120).map("".join), st.integers(min_value=64, max_value=400))
def test_every_split_fits_renders_balanced_and_loses_nothing(text: str, limit: int) -> None:
    chunks = split_parts(text, limit)

    assert "".join(c.body for c in chunks) == text
    for chunk in chunks:
        assert chunk.body
        assert len(chunk.text) <= limit
        assert fences_balanced(chunk.text)
        assert chunk.prefix == "" or ADDED_PREFIX.fullmatch(chunk.prefix)
        assert chunk.suffix in ("", "```", "\n```")
    assert [c.text for c in chunks] == split_message(text, limit)
