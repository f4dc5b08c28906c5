"""Command substitution ``$(…)`` and process substitution ``<(…)`` judged in stages, so the
classifier stays pure.

The reader meets ``$(inner)``. When the caller has not yet run ``inner`` it raises
``NeedsStage``; ``classify`` judges ``inner`` on its own and answers with a verdict that asks
the caller (the shell tool, which may spawn processes) to run the inner command's rendered
script read-only and judge again with its output. When the output is known, it becomes data
in the word the way bash would make it: trailing newlines stripped, one word when quoted.
An unquoted result is split into fields and globbed as bash does (``expansion.fields``),
so the words judged are the words bash builds; what runs is the re-rendered structure, in
which the substituted text is quoted and never read as shell again. A process substitution becomes a
word standing for a readable pipe holding the output (``piped_input``).
"""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.verdict import Denied, shown

MAX_SUBSTITUTIONS: Final = 8
"""A command line with more command substitutions is refused."""

_SPLIT_OR_GLOB: Final = frozenset(" \t\n*?[")

PIPED_INPUT: Final = "\x01"
"""Starts a word that stands for a process substitution ``<(…)`` already run: the rest of
the word is its output. Input never holds it (control characters are refused). Rules see it
as a file that may be read; ``structure.quote`` renders it as ``<(printf '%s' 'output')``,
so bash reads a pipe holding exactly the judged data."""


def piped_input(output: str) -> str:
    """The word standing for a process substitution whose inner command printed ``output``."""
    if "\0" in output:
        raise Denied("the output of a process substitution holds a NUL byte")
    return PIPED_INPUT + output


def is_piped_input(word: str) -> bool:
    return word.startswith(PIPED_INPUT)


class NeedsStage(Denied):
    """Raised by the reader for a substitution whose output is not known yet."""

    def __init__(self, inner: str, kind: str) -> None:
        super().__init__(f"the {kind} `{shown(inner)}` has not run yet")
        self.inner = inner
        self.kind = kind


def inner_text(text: str, start: int) -> tuple[str, int]:
    """The command inside ``$(`` at ``start`` and the index after its ``)``.

    Only a plain inner command is read: quotes and backslashes are followed, and an unquoted
    ``(``, backquote, line break or comment inside is refused rather than matched the way
    bash's recursive parser would.
    """
    i = start + 2
    quote: str | None = None
    escaped = -1  # the index of the last character a backslash escaped
    while i < len(text):
        c = text[i]
        if quote == "'":
            if c == "'":
                quote = None
        elif c == "\\":
            i += 1
            escaped = i
        elif quote == '"':
            if c == '"':
                quote = None
            elif c in "`$" and text.startswith(("`", "$("), i):
                raise Denied("a command substitution inside another is not evaluated")
        elif c in "'\"":
            quote = c
        elif c == ")":
            inner = text[start + 2 : i]
            if not inner.strip():
                raise Denied("an empty command substitution `$()` is not evaluated")
            return inner, i + 1
        elif c in "(`\n" or (
            c == "#" and (i == start + 2 or (text[i - 1] in " \t;|&<>" and escaped != i - 1))
        ):
            raise Denied(
                f"`{shown(c)}` inside a command substitution is not evaluated; plan mode "
                "evaluates only a plain read-only command there"
            )
        i += 1
    raise Denied("a command substitution `$(` is not closed")


def substituted(inner: str, output: str, *, quoted: bool, split: bool) -> str:
    """The text ``output`` gives in the word, as bash would substitute it (trailing line
    breaks removed). Unquoted and ``split``, bash goes on to split it into fields and glob
    them (the reader marks it so, ``expansion.fields``); unquoted in ``[[ … ]]``, where it
    would be a pattern, what bash would glob or drop is refused."""
    value = output.rstrip("\n")
    if "\0" in value or PIPED_INPUT in value:
        raise Denied(f"the output of `$({shown(inner)})` holds a NUL or \\x01 byte")
    if not quoted and not split:
        if not value:
            raise Denied(
                f"the unquoted `$({shown(inner)})` is empty, so bash would drop the word; quote it"
            )
        if any(c in _SPLIT_OR_GLOB for c in value):
            raise Denied(
                f"the output of the unquoted `$({shown(inner)})` would be split or globbed "
                'by bash; quote it (`"$(…)"`)'
            )
    return value
