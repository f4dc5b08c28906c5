"""What the reader makes of a command line, before anything is expanded or judged: words
(with which characters were quoted), redirections, commands, pipelines and connectors,
``for`` and ``while read`` loops still to unroll, other ``while``/``until`` loops and ``if``
clauses (rendered as written), ``( … )`` subshells and ``[[ … ]]`` conditionals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final


@dataclass(frozen=True, slots=True)
class Word:
    """A word after quote removal, with which characters were quoted (or escaped)."""

    text: str
    quoted: tuple[bool, ...]
    source: str
    separators: tuple[bool, ...] | None = None
    """Set when the word holds an unquoted command substitution, whose output bash splits
    into fields: for each character, whether it is IFS whitespace from that output (a field
    separator, ``expansion.fields``). None: bash keeps the word whole."""

    def unquoted(self, index: int) -> bool:
        return not self.quoted[index]


@dataclass(slots=True)
class RawRedirect:
    fd: int | None
    op: str
    target: Word


@dataclass(slots=True)
class RawCommand:
    words: list[Word] = field(default_factory=list)
    redirects: list[RawRedirect] = field(default_factory=list)


@dataclass(slots=True)
class RawConditional:
    """``[[ … ]]``: its words, and its operators (``&&``, ``||``, ``(``, ``)``, ``<``, ``>``)
    as plain strings, in order (``conditional`` judges and renders it)."""

    tokens: list[Word | str]


@dataclass(slots=True)
class RawScript:
    pipelines: list[list[Element] | RawLoop | RawIf | RawRepeat] = field(default_factory=list)
    connectors: list[str] = field(default_factory=list)
    uses_pwd: bool = False
    """Set on a whole line that read ``$PWD`` or ``~+`` (a ``cd`` would change them)."""
    constructs: tuple[str, ...] = ()
    """On a whole line: the shell constructs the reader evaluated, each naming the family
    and module that decided it (``check-bash --explain`` prints them)."""


LOOP_VALUES: Final = tuple(chr(code) for code in range(8))
"""``LOOP_VALUES[i]`` stands in a loop body's word for a use of the loop's ``i``-th variable
(``$f``, ``${f}``, ``"$f"``); its quoted flag says whether the use was quoted. Input never
holds them: NUL and the other control characters are refused."""

LOOP_VALUE: Final = LOOP_VALUES[0]
"""The first (for a ``for`` loop, the only) loop variable's stand-in."""


@dataclass(slots=True)
class RawLoop:
    """``for NAME in WORDS; do BODY; done`` or ``while read NAME…; do BODY; done``, a whole
    element of its list (``;`` or a line break before and after it): unrolled when judged,
    once for each word of the list (or line of the input)."""

    names: tuple[str, ...]
    words: list[Word]
    body: RawScript
    values: list[tuple[str, ...]] | None = None
    """Set for ``while read NAME…``: for each line its input gave, the value ``read`` gave
    each name (``words`` is then empty)."""


@dataclass(slots=True)
class RawRepeat:
    """``while LIST; do LIST; done`` or ``until LIST; do LIST; done`` whose condition is not a
    ``read``: both lists judged, rendered as written; it repeats until its condition
    decides, within the shell's timeout."""

    until: bool
    condition: RawScript
    body: RawScript


@dataclass(slots=True)
class RawIf:
    """``if C; then B; elif C; then B; else E; fi``: each branch's condition and body."""

    branches: list[tuple[RawScript, RawScript]]
    otherwise: RawScript | None


@dataclass(slots=True)
class RawSubshell:
    """``( … )``: a list run in a subshell, so a ``cd`` inside ends at the ``)``; or, with
    ``group``, ``{ …; }``: a list run in the shell itself (a ``cd`` inside is refused), also
    what a loop piped or joined by ``&&``/``||`` stands in."""

    body: RawScript
    group: bool = False
    negated: bool = False
    """A group standing for ``! PIPELINE``: bash inverts its status."""


Element = RawCommand | RawConditional | RawSubshell
"""What stands in a pipeline."""
