"""A word as the lexer builds it, character by character: which characters were quoted, and
which came from an unquoted substitution's output and so split the word into fields."""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.raw import Word
from plancord.core.shell.readonly.verdict import Denied, shown

IFS_WHITESPACE: Final = frozenset(" \t\n")
"""bash's default ``IFS``, which the sandbox never changes: where fields split."""
_NOT_ACTIVE_IN_OUTPUT: Final = frozenset("{},~")


class WordBuilder:
    """A word being read: its characters, which were quoted, and which split it."""

    __slots__ = ("chars", "empty_quotes", "quoted", "separators", "split")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.quoted: list[bool] = []
        self.separators: list[bool] = []
        self.split = False  # an unquoted substitution's output is in the word
        self.empty_quotes = False  # `''` or `""` (a quoted empty string) is in the word

    def add(self, text: str, quoted: bool) -> None:
        self.chars.extend(text)
        self.quoted.extend([quoted] * len(text))
        self.separators.extend([False] * len(text))

    def add_fields(self, output: str) -> None:
        """An unquoted substitution's ``output``, as bash goes on to treat it: split into
        fields at IFS whitespace, then each field globbed (so its glob characters stay
        unquoted), never brace-expanded (braces come before substitution)."""
        self.split = True
        for char in output:
            self.chars.append(char)
            self.quoted.append(char in _NOT_ACTIVE_IN_OUTPUT)
            self.separators.append(char in IFS_WHITESPACE)

    def build(self, source: str) -> Word:
        text = "".join(self.chars)
        if not self.split:
            return Word(text, tuple(self.quoted), source)
        if self.empty_quotes:
            raise Denied(
                f"`{shown(source)}` joins a quoted empty string to an unquoted substitution; "
                "write one or the other"
            )
        return Word(text, tuple(self.quoted), source, tuple(self.separators))

    def tilde_position(self) -> bool:
        """Whether an unquoted ``~`` here would be expanded (word start, or after ``=``/``:``)."""
        if not self.chars:
            return True
        return not self.quoted[-1] and self.chars[-1] in "=:"
