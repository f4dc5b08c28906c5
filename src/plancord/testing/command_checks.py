"""Discord's rules for an application command tree, checked on the list the bot syncs
(``PUT /applications/{id}[/guilds/{id}]/commands``), which SimCord stores unchecked.

Each rule carries its source in Discord's API documentation (application-commands.mdx):
- K1 Application Command Naming: CHAT_INPUT command and option names match
  ``^[-_'\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$`` and are lower case where the letter has
  a lower case; USER and MESSAGE command names are 1–32 characters.
- K2 Application Command (and Option) Structure: a CHAT_INPUT description is 1–100.
- K3 the same: at most 25 options per command, subcommand or group.
- K4 Option Structure / Option Choice Structure: at most 25 choices, each name 1–100 and a
  string value at most 100.
- K5 Option Structure (warning): required options come before optional ones.
- K6 Option Structure, footnote: option names are unique within one array.
- K7 Option Structure, footnote: ``autocomplete`` may not be set with ``choices``.
- K8 Option Structure: ``min_length`` 0–6000, ``max_length`` 1–6000.
- K9 Slash Commands: name, description and choice values of one command, all its options,
  with the longest localization of each, at most 8000 characters.
- K10 Registering a Command: at most 100 CHAT_INPUT, 15 USER and 15 MESSAGE commands.
- K11 the same: names unique per type (within one scope, which one bulk sync sets).

:func:`command_problems` returns each break as (path, text); the caller answers Discord's
way (400, 50035).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

Problem = tuple[tuple[str | int, ...], str]

CHAT_INPUT, USER, MESSAGE = 1, 2, 3
SUB_COMMAND, SUB_COMMAND_GROUP = 1, 2
COMMANDS_PER_TYPE = {CHAT_INPUT: 100, USER: 15, MESSAGE: 15}
NAME_MAX = 32
DESCRIPTION_MAX = 100
OPTIONS_MAX = 25
CHOICES_MAX = 25
CHOICE_TEXT_MAX = 100
STRING_LENGTH_MAX = 6000
COMMAND_TEXT_MAX = 8000
_NAME_MARKS = frozenset("-_'")
_SCRIPTS = ("DEVANAGARI", "THAI")


def _name_char(char: str) -> bool:
    if char in _NAME_MARKS or unicodedata.category(char)[0] in "LN":
        return True
    return unicodedata.name(char, "").startswith(_SCRIPTS)


def chat_name_problem(name: Any) -> str | None:
    """Why ``name`` is no CHAT_INPUT command or option name (K1), or None."""
    if not isinstance(name, str) or not 1 <= len(name) <= NAME_MAX:
        return f"must be 1 to {NAME_MAX} characters"
    if not all(_name_char(char) for char in name):
        return "may hold only letters, digits, '-', '_' and \"'\""
    if name != name.lower():
        return "must be lower case"
    return None


def _localized(item: Mapping[str, Any], key: str) -> list[str]:
    texts = [item.get(key) or ""]
    texts += list((item.get(f"{key}_localizations") or {}).values())
    return [str(text) for text in texts]


def _longest(item: Mapping[str, Any], key: str) -> int:
    return max(len(text) for text in _localized(item, key))


def command_problems(commands: Sequence[Any]) -> list[Problem]:
    """Every break of K1–K11 in one bulk sync's list of commands."""
    problems: list[Problem] = []
    counts = Counter(int(c.get("type", CHAT_INPUT)) for c in commands if isinstance(c, Mapping))
    for kind, most in COMMANDS_PER_TYPE.items():
        if counts[kind] > most:
            problems.append(((), f"{counts[kind]} commands of type {kind} (at most {most}, K10)"))
    seen: set[tuple[int, str]] = set()
    for index, command in enumerate(commands):
        if not isinstance(command, Mapping):
            continue
        kind = int(command.get("type", CHAT_INPUT))
        key = (kind, str(command.get("name")))
        if key in seen:
            problems.append(((index, "name"), f"{key[1]!r} is registered twice (K11)"))
        seen.add(key)
        problems += [((index, *path), text) for path, text in _command(command, kind)]
    return problems


def _command(command: Mapping[str, Any], kind: int) -> Iterator[Problem]:
    if kind != CHAT_INPUT:
        for text in _localized(command, "name"):
            if not 1 <= len(text) <= NAME_MAX:
                yield ("name",), f"must be 1 to {NAME_MAX} characters (K1)"
        return
    yield from _named(command)
    yield from _options(command.get("options") or [], ("options",))
    total = _text_size(command)
    if total > COMMAND_TEXT_MAX:
        yield (), f"names, descriptions and choices hold {total} characters (K9)"


def _named(item: Mapping[str, Any]) -> Iterator[Problem]:
    for text in _localized(item, "name"):
        problem = chat_name_problem(text)
        if problem is not None:
            yield ("name",), f"{text!r} {problem} (K1)"
    for text in _localized(item, "description"):
        if not 1 <= len(text) <= DESCRIPTION_MAX:
            yield ("description",), f"must be 1 to {DESCRIPTION_MAX} characters (K2)"


def _options(options: Sequence[Any], path: tuple[str | int, ...]) -> Iterator[Problem]:
    if len(options) > OPTIONS_MAX:
        yield path, f"{len(options)} options (at most {OPTIONS_MAX}, K3)"
    names = Counter(str(o.get("name")) for o in options if isinstance(o, Mapping))
    for name, count in names.items():
        if count > 1:
            yield path, f"the option name {name!r} is used {count} times (K6)"
    optional_seen = False
    for index, option in enumerate(options):
        if not isinstance(option, Mapping):
            continue
        where = (*path, index)
        yield from (((*where, *p), text) for p, text in _named(option))
        kind = int(option.get("type", 3))
        if kind in (SUB_COMMAND, SUB_COMMAND_GROUP):
            yield from _options(option.get("options") or [], (*where, "options"))
            continue
        if option.get("required"):
            if optional_seen:
                yield where, "a required option after an optional one (K5)"
        else:
            optional_seen = True
        yield from _option_values(option, where)


def _option_values(option: Mapping[str, Any], where: tuple[str | int, ...]) -> Iterator[Problem]:
    choices = option.get("choices") or []
    if choices and option.get("autocomplete"):
        yield where, "autocomplete may not be set with choices (K7)"
    if len(choices) > CHOICES_MAX:
        yield (*where, "choices"), f"{len(choices)} choices (at most {CHOICES_MAX}, K4)"
    for index, choice in enumerate(choices):
        if isinstance(choice, Mapping):
            found = choice_problems(choice)
            yield from (((*where, "choices", index, *p), f"{t} (K4)") for p, t in found)
    for key, low in (("min_length", 0), ("max_length", 1)):
        value = option.get(key)
        if value is not None and not low <= int(value) <= STRING_LENGTH_MAX:
            yield (*where, key), f"must be {low} to {STRING_LENGTH_MAX} (K8)"


def choice_problems(choice: Mapping[str, Any]) -> Iterator[Problem]:
    """A choice's name 1–100 and string value at most 100 (K4, and X2 for autocomplete)."""
    for text in _localized(choice, "name"):
        if not 1 <= len(text) <= CHOICE_TEXT_MAX:
            yield ("name",), f"must be 1 to {CHOICE_TEXT_MAX} characters"
    value = choice.get("value")
    if isinstance(value, str) and len(value) > CHOICE_TEXT_MAX:
        yield ("value",), f"must be at most {CHOICE_TEXT_MAX} characters"


def _text_size(item: Mapping[str, Any]) -> int:
    total = _longest(item, "name") + _longest(item, "description")
    for choice in item.get("choices") or []:
        if isinstance(choice, Mapping):
            total += _longest(choice, "name") + len(str(choice.get("value", "")))
    for option in item.get("options") or []:
        if isinstance(option, Mapping):
            total += _text_size(option)
    return total
