"""What a command rule is, and the common rule: an option table plus what the operands are.

A rule looks at one expanded argv (``Call``) and raises ``Denied`` with a reason, or returns.
Most commands need only ``table_rule``: parse with the program's option table, then check
the operands (and the option values that name files) with the path rules. Adding a command
is one entry in a family's table module.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Literal

from plancord.core.shell.readonly.options import OptionTable, Parsed, parse
from plancord.core.shell.readonly.paths import Place, check_path, looks_like_path
from plancord.core.shell.readonly.verdict import Denied, shown


@dataclass(frozen=True, slots=True)
class Call:
    """One command as it will run: program name, arguments after expansion, and where.

    ``feeders`` are the argvs of the commands before it in its pipeline, whose output is its
    input (empty when its input is not a pipe): ``xargs`` turns that input into words.
    """

    program: str
    args: list[str]
    place: Place
    feeders: tuple[tuple[str, ...], ...] = ()


Rule = Callable[[Call], None]

Operands = Literal["paths", "pattern", "none", "free", "text"]
"""What a command's operands are: all files (``paths``); a pattern or script first, unless
an option gave it, then files (``pattern``); none at all; or values that are not files
(``free``, where only words that look like paths are checked); or text the program
never opens (``text``)."""


def check_free_words(call: Call, words: Collection[str]) -> None:
    """Check the words of a command that are not declared paths but read as one."""
    for word in words:
        if looks_like_path(word):
            check_path(call.place, word)


_SOURCES: dict[object, str] = {}


def describe(rule: Callable[..., object]) -> str:
    """Which rule this is, for ``check-bash --explain``: the option table's manual, or the
    checker's name and the first line of its docstring."""
    source = _SOURCES.get(rule)
    if source is not None:
        return f"option table from {source}"
    module = rule.__module__.rsplit(".", 1)[-1]
    summary = (rule.__doc__ or "").strip().split("\n", 1)[0]
    return f"{module}.{rule.__name__}" + (f" ({summary})" if summary else "")


def table_rule(
    table: OptionTable,
    operands: Operands = "paths",
    *,
    path_options: Collection[str] = (),
    given_by: Collection[str] = (),
    max_operands: int | None = None,
    check: Callable[[Call, Parsed], None] | None = None,
    lists: bool = False,
) -> Rule:
    """A rule from an option table: ``path_options`` take file names; for ``pattern``
    operands, ``given_by`` are the options that supply the pattern instead of the first
    operand; ``max_operands`` refuses extra operands (``uniq IN OUT`` writes OUT); ``lists``
    says the program shows the names in its operands rather than reading them."""

    def rule(call: Call) -> None:
        parsed = parse(call.program, call.args, table)
        for value in parsed.values(*path_options):
            check_path(call.place, value)
        words = list(parsed.operands)
        if operands == "none" and words:
            raise Denied(f"`{call.program}` takes no operands here (`{shown(words[0])}`)")
        if operands == "pattern" and not parsed.has(*given_by):
            if not words:
                raise Denied(f"`{call.program}` needs a pattern")
            words = words[1:]
        if max_operands is not None and len(words) > max_operands:
            raise Denied(
                f"`{call.program}` takes at most {max_operands} file operand"
                f"{'s' if max_operands != 1 else ''} here; another would be written to"
            )
        if operands == "free":
            check_free_words(call, words)
        elif operands != "text":
            for word in words:
                check_path(call.place, word, what="lists" if lists else "reads")
        if check is not None:
            check(call, parsed)

    _SOURCES[rule] = table.source
    return rule
