"""What bash's ``read`` builtin assigns, so a ``while read`` loop can be unrolled.

``compound`` reads ``while [IFS=…] read [-r] NAME…; do …; done`` and runs its input as a
read-only stage; this module turns that input into the values each round gives the names:
the lines ``read`` reads (``read_lines``), each split among the names as bash splits it
(``read_fields``, checked against bash itself in the tests), with the ``IFS`` given to
``read`` (``read_ifs``).
"""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.loops import MAX_LOOP_VALUES
from plancord.core.shell.readonly.parameters import HOME_VALUE
from plancord.core.shell.readonly.raw import LOOP_VALUES, Word
from plancord.core.shell.readonly.verdict import Denied, shown

_IFS_DEFAULT: Final = " \t\n"


def read_ifs(word: Word) -> str:
    """The value of ``IFS=VALUE`` given to ``read``: plain text only."""
    markers = {*LOOP_VALUES, HOME_VALUE}
    if any(word.quoted[:4]) or word.separators is not None or markers & set(word.text):
        raise Denied(f"`{shown(word.source)}`: only a plain `IFS=VALUE` is evaluated")
    return word.text[4:]


def read_fields(line: str, count: int, ifs: str | None) -> tuple[str, ...]:
    """The values bash's ``read`` gives ``count`` names from ``line``, with ``IFS`` set to
    ``ifs`` (None: unset, bash's default of space, tab and line break).

    Leading IFS white space is skipped; each name but the last takes one field and the
    delimiter after it (IFS white space, at most one other IFS character, IFS white space);
    the last takes the rest with trailing IFS white space removed, or just its one field
    when nothing follows that field's delimiter. An empty ``IFS`` splits nothing.
    """
    separators = _IFS_DEFAULT if ifs is None else ifs
    if not separators:
        return (line, *("",) * (count - 1))
    white = "".join(c for c in " \t\n" if c in separators)
    rest = line.lstrip(white)
    values: list[str] = []
    for _ in range(count - 1):
        field, rest = _field(rest, separators, white) if rest else ("", "")
        values.append(field)
    if rest:
        field, after = _field(rest, separators, white)
        rest = field if not after else rest.rstrip(white)
    return (*values, rest)


def _field(text: str, separators: str, white: str) -> tuple[str, str]:
    """The first field of ``text`` and what follows its delimiter (bash's
    ``get_word_from_string``)."""
    start = len(text) - len(text.lstrip(white))
    end = start
    while end < len(text) and text[end] not in separators:
        end += 1
    after = text[end:].lstrip(white)
    if after and after[0] in separators and after[0] not in white:
        after = after[1:].lstrip(white)
    return text[start:end], after


def read_lines(output: str, *, raw: bool) -> list[str]:
    """The lines ``read`` reads, one at a time, until it fails."""
    lines = output.split("\n")[:-1]  # a last line without a newline makes `read` fail
    if len(lines) > MAX_LOOP_VALUES:
        raise Denied(
            f"the `while read` loop's input has more than {MAX_LOOP_VALUES} lines; plan "
            "mode unrolls at most that many"
        )
    if "\0" in output:
        raise Denied("the `while read` loop's input holds a NUL byte")
    if not raw and any("\\" in line for line in lines):
        raise Denied("`read` without `-r` treats backslashes in its input; use `read -r`")
    return lines
