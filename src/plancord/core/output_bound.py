"""The one bound on what a tool hands the model: the first bytes, and a note of the rest.

Why this exists: a tool's output goes into the conversation, is stored with it and is sent
with every later request. The shell's output, an MCP server's answer, anything that comes
later: each keeps its first ``limit`` bytes and says how much it dropped, in the same words,
so a result never grows the conversation past what the API takes and the model knows
there is more.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field


@dataclass(slots=True)
class OutputBound:
    """Bytes fed in pieces (``add``), kept up to ``limit``, counted in full."""

    limit: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        room = self.limit - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.total += len(data)

    @property
    def truncated(self) -> bool:
        return self.total > self.limit

    def text(self, how_to_see_more: str = "") -> tuple[str, bool]:
        """What was kept, decoded (bad bytes replaced), and whether anything was cut; a cut
        text ends with a note of how much was shown, and ``how_to_see_more`` when given."""
        truncated = self.truncated
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        text = decoder.decode(bytes(self.kept), final=not truncated)
        if truncated:
            separator = "" if text.endswith("\n") or not text else "\n"
            more = f"; {how_to_see_more}" if how_to_see_more else ""
            text += (
                f"{separator}[output truncated: showing the first {self.limit:,} of "
                f"{self.total:,} bytes{more}]"
            )
        return text, truncated


def bounded_text(text: str, limit: int, how_to_see_more: str = "") -> tuple[str, bool]:
    """``text`` kept to its first ``limit`` bytes of UTF-8, with the note when cut."""
    bound = OutputBound(limit)
    bound.add(text.encode("utf-8", errors="replace"))
    return bound.text(how_to_see_more)
