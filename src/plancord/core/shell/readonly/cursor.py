"""What the compound-command and list readers need from the lexer, as a protocol.

``grammar``, ``compound`` and ``conditional`` read through the lexer (``reading.Reader``)
while the lexer calls them for lists and compound commands; they see it through this
protocol, so the modules do not import each other in a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from plancord.core.shell.readonly.raw import RawRedirect, RawScript, Word

Token = tuple[str, Word | str]


class Cursor(Protocol):
    """The lexer's position in the text and the state the compound readers share."""

    s: str
    i: int
    outputs: Mapping[str, str]
    loop_names: tuple[str, ...] | None
    in_conditional: bool
    in_branch: bool
    depth: int
    ended: str | None

    def script(self, until: frozenset[str] = frozenset()) -> RawScript: ...

    def peek(self) -> Token | None: ...

    def token(self) -> Token | None: ...

    def word(self) -> Word: ...

    def inner_output(self, inner: str, kind: str) -> str: ...

    def redirect_after(self, word: Word) -> RawRedirect | None: ...

    def target(self, op: str) -> Word: ...

    def redirection(self, fd: int | None, op: str) -> RawRedirect: ...

    def evaluated(self, construct: str) -> None: ...
