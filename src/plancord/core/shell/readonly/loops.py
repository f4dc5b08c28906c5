"""``for`` loops over a literal or glob list, unrolled into the commands bash would run.

``for f in src/*.py; do head -3 "$f"; done`` is judged as ``head -3 src/a.py; head -3
src/b.py``: the list is expanded as bash expands it (in the directory the loop runs in), and
each use of the variable in the body takes each value in turn. A quoted use (``"$f"``) is
exactly the value; an unquoted use (``$f``) is too when bash would neither split nor glob
it (no blank, no glob character, no backslash, not empty), and is refused otherwise. What
runs is the unrolled structure, rendered with every word quoted: bash never sees the loop.

A loop is unrolled only as a whole element of its command line (``;`` or a line break around
it, never ``&&``, ``||`` or a pipe), so that running its iterations one after another with
``;`` is what bash does; it may not nest. At most ``MAX_LOOP_VALUES`` values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from plancord.core.shell.readonly.expansion import GlobBudget, check_braces, expand
from plancord.core.shell.readonly.raw import (
    LOOP_VALUES,
    Element,
    RawCommand,
    RawConditional,
    RawIf,
    RawLoop,
    RawRedirect,
    RawRepeat,
    RawScript,
    RawSubshell,
    Word,
)
from plancord.core.shell.readonly.verdict import Denied, shown

MAX_LOOP_VALUES: Final = 256
"""A ``for`` loop over more values than this is refused rather than unrolled."""

_SPLIT_OR_GLOB: Final = frozenset(" \t\n*?[\\")


def unroll(raw: RawScript, cwd: Path | None, budget: GlobBudget) -> RawScript:
    """``raw`` with every loop of its own list replaced by its iterations, joined by ``;``
    (the lists inside a subshell or an ``if`` are unrolled when they are judged)."""
    result = RawScript()
    for index, element in enumerate(raw.pipelines):
        if index:
            result.connectors.append(raw.connectors[index - 1])
        if not isinstance(element, RawLoop):
            result.pipelines.append(element)
            continue
        iterations = element.values
        if iterations is None:
            iterations = [(value,) for value in _values(element, cwd, budget)]
            if not iterations:
                raise Denied(
                    f"the `for {element.names[0]}` loop runs over no words, so it runs nothing"
                )
        if not iterations:  # `while read` over no lines: bash runs nothing, status 0
            result.pipelines.append([RawCommand([Word("true", (True,) * 4, "true")])])
        for number, value in enumerate(iterations):
            if number:
                result.connectors.append(";")
            body = _script(element.body, dict(zip(element.names, value, strict=True)))
            for position, pipeline in enumerate(body.pipelines):
                if position:
                    result.connectors.append(body.connectors[position - 1])
                result.pipelines.append(pipeline)
    return result


def _values(loop: RawLoop, cwd: Path | None, budget: GlobBudget) -> list[str]:
    values: list[str] = []
    for word in loop.words:
        check_braces(word)
        values.extend(expand(word, cwd, budget))
        if len(values) > MAX_LOOP_VALUES:
            raise Denied(
                f"the `for {loop.names[0]}` loop runs over more than {MAX_LOOP_VALUES} words; "
                "plan mode unrolls at most that many"
            )
    return values


def _script(script: RawScript, values: dict[str, str]) -> RawScript:
    """``script`` with each loop variable's stand-in replaced by its value (``values``, by
    name, in the order of ``LOOP_VALUES``)."""
    pipelines: list[list[Element] | RawLoop | RawIf | RawRepeat] = []
    for element in script.pipelines:
        if isinstance(element, RawIf):
            otherwise = element.otherwise
            pipelines.append(
                RawIf(
                    [(_script(c, values), _script(b, values)) for c, b in element.branches],
                    None if otherwise is None else _script(otherwise, values),
                )
            )
        elif isinstance(element, (RawLoop, RawRepeat)):  # the reader keeps loops out of loops
            raise Denied("a loop inside a loop is not evaluated")
        else:
            pipelines.append([_element(part, values) for part in element])
    return RawScript(pipelines, list(script.connectors))


def _element(element: Element, values: dict[str, str]) -> Element:
    if isinstance(element, RawSubshell):
        return RawSubshell(_script(element.body, values), element.group, element.negated)
    if isinstance(element, RawConditional):
        return RawConditional(
            [t if isinstance(t, str) else _word(t, values) for t in element.tokens]
        )
    return RawCommand(
        [_word(word, values) for word in element.words],
        [RawRedirect(r.fd, r.op, _word(r.target, values)) for r in element.redirects],
    )


def _word(word: Word, values: dict[str, str]) -> Word:
    stand_ins = dict(zip(LOOP_VALUES, values.items(), strict=False))
    if not stand_ins.keys() & set(word.text):
        return word
    text: list[str] = []
    quoted: list[bool] = []
    for char, was_quoted in zip(word.text, word.quoted, strict=True):
        named = stand_ins.get(char)
        if named is None:
            text.append(char)
            quoted.append(was_quoted)
            continue
        name, value = named
        if not was_quoted and (not value or _SPLIT_OR_GLOB & set(value)):
            raise Denied(
                f"`${name}` is unquoted and its value `{shown(value)}` would be split or "
                f'globbed by bash; write `"${name}"`'
            )
        text.extend(value)
        quoted.extend([was_quoted] * len(value))  # bash neither splits nor globs it (above)
    return Word("".join(text), tuple(quoted), word.source)
