"""Parse a command's options the way the program itself does, from an allow-list table.

GNU programs parse with ``getopt_long``: short options cluster (``-nr``), a short option
that takes a value takes the rest of its cluster or the next word (``-k2``, ``-k 2``), one
with an *optional* value takes only an attached one (``-U5``; ``-U 5`` leaves ``5`` an
operand); long options take ``--name=value`` or ``--name value``, optional values only with
``=``; a unique prefix of a long name stands for it (``--unifi``); options may follow
operands until ``--``. ``OptionTable`` describes one program that way, and ``parse`` follows
those rules exactly, so the filter assigns every value to the option the program will.

A table lists what is **allowed**; ``known`` lists the program's other long options, so that
an abbreviation resolves to the option the program would pick (and is refused when that
option is not allowed, or when the prefix is ambiguous). An option not in the table is
refused. As a second line, a value given as a separate word may not begin with ``-`` unless
the table says the option takes such values: a table that misjudged whether an option takes
a value then refuses instead of letting a value become an option.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final, Literal

from plancord.core.shell.readonly.verdict import Denied, shown

Kind = Literal["flag", "value", "optional"]


def names(text: str) -> frozenset[str]:
    """The whitespace-separated names in ``text``: tables are written as prose-like lists."""
    return frozenset(text.split())


_NUMERIC: Final = re.compile(r"-[0-9]+")


@dataclass(frozen=True)
class OptionTable:
    """One program's options: ``source`` names the manual (and version) they were read from."""

    source: str
    flags: str = ""
    values: str = ""
    optional: str = ""
    long_flags: str = ""
    long_values: str = ""
    long_optional: str = ""
    known: str = ""
    reasons: Mapping[str, str] = field(default_factory=dict)
    abbreviations: bool = True
    permute: bool = True
    numeric: bool = False
    negatable: bool = False
    dash_values: str = ""

    @cached_property
    def longs(self) -> dict[str, Kind]:
        kinds: dict[str, Kind] = {}
        for kind, names in (
            ("flag", self.long_flags),
            ("value", self.long_values),
            ("optional", self.long_optional),
        ):
            for name in names.split():
                kinds[name] = kind  # type: ignore[assignment]
        return kinds

    @cached_property
    def every_long(self) -> frozenset[str]:
        return frozenset(self.longs) | frozenset(self.known.split())

    @cached_property
    def dash_value_options(self) -> frozenset[str]:
        return frozenset(self.dash_values.split())


@dataclass(frozen=True, slots=True)
class Parsed:
    """Options in order as ``(canonical name, value)`` and the operands."""

    options: tuple[tuple[str, str | None], ...]
    operands: tuple[str, ...]

    def has(self, *names: str) -> bool:
        return any(option in names for option, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [value for option, value in self.options if option in names and value is not None]


def refused(program: str, option: str, table: OptionTable) -> Denied:
    reason = table.reasons.get(option)
    if reason is not None:
        return Denied(f"`{program} {option}` {reason}")
    return Denied(f"`{program} {shown(option)}` is not an option plan mode knows to be read-only")


def _resolve_long(program: str, name: str, table: OptionTable) -> tuple[str, Kind]:
    """The long option ``--name`` stands for, as the program resolves it, and its kind."""
    longs = table.longs
    if name in longs:
        return name, longs[name]
    negation = table.negatable and name.startswith("no-") and longs.get(name[3:]) == "flag"
    if negation and name not in table.every_long:
        return name, "flag"
    if name in table.every_long:
        raise refused(program, "--" + name, table)
    candidates = sorted(option for option in table.every_long if option.startswith(name))
    if not table.abbreviations:
        if candidates:
            raise Denied(
                f"`{program} --{shown(name)}` abbreviates an option; write it in full "
                f"(`--{candidates[0]}`…)"
            )
        raise refused(program, "--" + name, table)
    if len(candidates) > 1:
        names = ", ".join(f"--{c}" for c in candidates[:4])
        raise Denied(f"`{program} --{shown(name)}` is ambiguous ({names})")
    if not candidates:
        raise refused(program, "--" + name, table)
    full = candidates[0]
    if full not in longs:
        raise refused(program, "--" + full, table)
    return full, longs[full]


def _separate_value(
    program: str, option: str, args: list[str], index: int, table: OptionTable
) -> str:
    if index >= len(args):
        raise Denied(f"`{program} {option}` needs a value")
    value = args[index]
    if value.startswith("-") and value != "-" and option not in table.dash_value_options:
        raise Denied(
            f"`{program} {option}` is given `{shown(value)}`, which looks like an option; "
            f"attach it as `{option}={shown(value)}`"
            if option.startswith("--")
            else f"`{program} {option}` is given `{shown(value)}`, which looks like an option"
        )
    return value


def parse(program: str, args: list[str], table: OptionTable) -> Parsed:
    """Split ``args`` into options and operands as ``program`` would, or raise ``Denied``."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands.extend(args[i:])
            break
        if word.startswith("--"):
            name, has_value, attached = word[2:].partition("=")
            full, kind = _resolve_long(program, name, table)
            option = "--" + full
            if kind == "flag":
                if has_value:
                    raise Denied(f"`{program} {option}` takes no value")
                options.append((option, None))
            elif kind == "optional":
                options.append((option, attached if has_value else None))
            elif has_value:
                options.append((option, attached))
            else:
                options.append((option, _separate_value(program, option, args, i, table)))
                i += 1
            continue
        if word.startswith("-") and word != "-":
            if table.numeric and _NUMERIC.fullmatch(word):
                options.append(("-NUM", word[1:]))
                continue
            i = _short_cluster(program, word, args, i, table, options)
            continue
        operands.append(word)
        if not table.permute:
            operands.extend(args[i:])
            break
    return Parsed(tuple(options), tuple(operands))


def _short_cluster(
    program: str,
    word: str,
    args: list[str],
    i: int,
    table: OptionTable,
    options: list[tuple[str, str | None]],
) -> int:
    letters = word[1:]
    j = 0
    while j < len(letters):
        letter = letters[j]
        option = "-" + letter
        j += 1
        rest = letters[j:]
        if letter in table.flags:
            options.append((option, None))
        elif letter in table.optional:
            options.append((option, rest or None))
            return i
        elif letter in table.values:
            if rest:
                options.append((option, rest))
                return i
            options.append((option, _separate_value(program, option, args, i, table)))
            return i + 1
        else:
            raise refused(program, option, table)
    return i
