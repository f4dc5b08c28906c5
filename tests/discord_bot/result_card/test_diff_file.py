"""The result's diff as an attachment: whole up to the limit, gzipped past it when that
fits, else cut at a line boundary with a note; never over the limit."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from plancord.discord_bot.result_card.diff_file import diff_attachment


async def test_small_diffs_are_attached_whole(tmp_path: Path) -> None:
    path = tmp_path / "d.diff"
    path.write_bytes(b"+a\n" * 100)

    made = await diff_attachment(path, "x", limit=1000)

    assert (made.data, made.filename, made.note) == (b"+a\n" * 100, "x.diff", None)


async def test_past_the_limit_it_is_gzipped_when_that_fits(tmp_path: Path) -> None:
    path = tmp_path / "d.diff"
    path.write_bytes(b"+the same line\n" * 10_000)

    made = await diff_attachment(path, "x", limit=50_000)

    assert made.filename == "x.diff.gz" and len(made.data) <= 50_000
    assert gzip.decompress(made.data) == path.read_bytes()
    assert made.note is not None and "gzipped" in made.note


async def test_past_the_limit_even_gzipped_it_is_cut_at_a_line(tmp_path: Path) -> None:
    path = tmp_path / "d.diff"
    lines = [os.urandom(30).hex().encode() + b"\n" for _ in range(5000)]
    path.write_bytes(b"".join(lines))

    made = await diff_attachment(path, "x", limit=50_000)

    assert made.filename == "x-cut.diff"
    assert made.note is not None and "**cut**" in made.note
    body, _, marker = made.data.rpartition(b"\n# plancord")
    assert len(made.data) <= 50_000 + 100
    assert body.endswith(b"\n") and path.read_bytes().startswith(body)
    assert marker.startswith(b": the diff is cut here")


async def test_an_empty_diff_attaches_nothing(tmp_path: Path) -> None:
    path = tmp_path / "d.diff"
    path.write_bytes(b"")

    made = await diff_attachment(path, "x")

    assert made.data == b"" and made.note is not None
