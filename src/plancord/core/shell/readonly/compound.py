"""The compound commands the reader accepts, read into the structure ``classify`` judges.

* ``for NAME in WORDS; do …; done``: unrolled by ``loops`` over the expanded words.
* ``while read [-r] NAME; do …; done < FILE`` and ``PRODUCER | while read …``: the input is
  a stage (``cat -- FILE``, or the producer's own text) that runs first, read-only; its
  lines become the loop's values the way ``read`` makes them (one line each, blanks around
  it stripped unless ``IFS=`` is given, a last line without a newline dropped, as bash's
  ``read`` fails on it), and the loop is unrolled like a ``for`` loop. The body's commands
  do not see the loop's remaining input: what runs is the unrolled list.
  ``read`` may name several variables (``IFS=: read -r a b rest``): each line is split into
  their values as bash's ``read`` splits it (``read_fields``), with the ``IFS`` given to it.
* ``until ! read [-r] NAME…; do …; done``, over the same inputs, is that same loop (``! read``
  succeeds where ``read`` fails, ending it).
* Any other ``while LIST; do LIST; done`` or ``until LIST; do LIST; done``: both lists are
  judged read-only and the loop runs as written (``RawRepeat``); nothing in it can write, so
  a loop that never ends only spends the shell's timeout, in the read-only sandbox. No
  substitution, redirection or pipe into it: each would be read once here but run each round.
* ``if …; then …; [elif …; then …;] [else …;] fi``: each list judged; rendered as written.
* ``( … )``: a subshell, in which ``cd DIR && …`` moves only the commands inside; ``{ …; }``
  a group (no ``cd`` inside), which is also how a loop piped on or joined by ``&&`` or
  ``||`` is read (``joined``).
* ``case WORD in …; esac``: decided when judged (``case_clause``), every list judged.
* ``[[ … ]]`` (``conditional``) and ``(( … ))`` of literals (``arithmetic``).

A loop or ``if`` stands as a whole element of its list. Loops may not nest in loops, nor
``if`` in ``if`` (an ``if`` in a loop, or a loop in an ``if``, may): each level is one more
place a reader can go wrong, and agents rarely need it.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly import arithmetic
from plancord.core.shell.readonly.case_clause import read_case
from plancord.core.shell.readonly.conditional import read_conditional
from plancord.core.shell.readonly.cursor import Cursor
from plancord.core.shell.readonly.expansion import check_braces, is_glob
from plancord.core.shell.readonly.raw import (
    LOOP_VALUES,
    RawCommand,
    RawConditional,
    RawIf,
    RawLoop,
    RawRepeat,
    RawScript,
    RawSubshell,
    Word,
)
from plancord.core.shell.readonly.read_builtin import read_fields, read_ifs, read_lines
from plancord.core.shell.readonly.structure import quote
from plancord.core.shell.readonly.substitution import NeedsStage
from plancord.core.shell.readonly.verdict import Denied, shown

MAX_SUBSHELL_DEPTH: Final = 8
STARTERS: Final = frozenset(("for", "while", "until", "if", "case", "[[", "(", "{"))
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DONE: Final = frozenset(("done",))

_SPECIAL_NAMES: Final = frozenset(("IFS", "PWD", "OLDPWD", "HOME"))

Compound = RawLoop | RawIf | RawRepeat | RawSubshell | RawConditional | RawCommand


def read_compound(
    reader: Cursor, starter: str, joiner: str | None, producer: str | None
) -> Compound:
    """The compound command ``starter`` opens. ``joiner`` is the connector before its
    pipeline; ``producer`` the text of the pipeline piped into it (None when not piped)."""
    if producer is not None and starter not in ("while", "until", "[[", "(", "{"):
        raise Denied(f"a pipe into `{starter}` is not evaluated")
    if starter == "[[":
        return read_conditional(reader)
    if starter == "{":
        reader.depth += 1
        if reader.depth > MAX_SUBSHELL_DEPTH:
            raise Denied(f"subshells and groups nest deeper than {MAX_SUBSHELL_DEPTH}")
        body = reader.script(frozenset(("}",)))
        reader.depth -= 1
        if reader.ended != "}":
            raise Denied("a `{` is not closed by `}`")
        reader.evaluated("a `{ …; }` group (compound)")
        return RawSubshell(body, group=True)
    if starter == "(":
        if reader.s.startswith("(", reader.i):
            status, reader.i = arithmetic.command(reader.s, reader.i - 1)
            text = "true" if status else "false"
            return RawCommand([Word(text, (True,) * len(text), text)])
        reader.depth += 1
        if reader.depth > MAX_SUBSHELL_DEPTH:
            raise Denied(f"subshells nest deeper than {MAX_SUBSHELL_DEPTH}")
        body = reader.script(frozenset((")",)))
        reader.depth -= 1
        if reader.ended != ")":
            raise Denied("a `(` is not closed")
        return RawSubshell(body)
    if starter == "case":
        if reader.in_branch or reader.loop_names is not None:
            raise Denied("`case` inside a loop, an `if` or a `case` is not evaluated")
        return read_case(reader)
    if reader.in_branch if starter == "if" else reader.loop_names is not None:
        kind = "an `if`" if starter == "if" else "a loop"
        raise Denied(f"`{starter}` inside {kind} is not evaluated")
    if starter == "if":
        return _read_if(reader)
    if starter == "for":
        return _read_for(reader)
    if not _reads_lines(reader, until=starter == "until"):
        return _read_repeat(reader, producer, until=starter == "until")
    return _read_while(reader, producer, until=starter == "until")


def joined(reader: Cursor, joiner: str | None) -> bool:
    """Whether a loop or ``if`` just read is joined to its list by more than ``;``: after
    ``&&`` or ``||``, or followed by ``|``, ``&&`` or ``||``. It then stands in a ``{ …; }``
    group, so its unrolled commands are one element (``for …; done | wc -l``)."""
    token = reader.peek()
    if joiner in ("&&", "||") or (token is not None and token[1] in ("|", "&&", "||")):
        reader.evaluated("a loop or `if` piped or joined: run as a `{ …; }` group (compound)")
        return True
    return False


def after_whole(reader: Cursor) -> str | None:
    """The connector after a loop or ``if`` (None at the end of the list): it is a whole
    element, so only ``;`` or a line break follows it."""
    token = reader.peek()
    if (
        token is None
        or token[1] == ")"
        or (
            isinstance(token[1], Word) and token[1].source in ("done", "fi", "then", "elif", "else")
        )
    ):
        return None
    reader.token()
    if token[1] in (";", "\n"):
        return ";"
    raise Denied(
        "a loop or `if` is evaluated only as a whole element of its list: `;` or a line "
        f"break after it, not `{shown(str(getattr(token[1], 'source', token[1])))}`"
    )


def _keyword(reader: Cursor, keyword: str, what: str) -> None:
    token = reader.token()
    while token is not None and token[1] == "\n":
        token = reader.token()
    if token is None or not isinstance(token[1], Word) or token[1].source != keyword:
        raise Denied(f"{what} has no `{keyword}`")


def _read_if(reader: Cursor) -> RawIf:
    branches = []
    otherwise = None
    reader.in_branch = True
    try:
        while True:
            condition = reader.script(frozenset(("then",)))
            body = reader.script(frozenset(("elif", "else", "fi")))
            branches.append((condition, body))
            if reader.ended == "elif":
                continue
            if reader.ended == "else":
                otherwise = reader.script(frozenset(("fi",)))
            return RawIf(branches, otherwise)
    finally:
        reader.in_branch = False


def _loop_body(reader: Cursor, names: tuple[str, ...]) -> RawScript:
    _keyword(reader, "do", f"the `{names[0]}` loop")
    reader.loop_names = names
    try:
        return reader.script(_DONE)
    finally:
        reader.loop_names = None


def _reads_lines(reader: Cursor, *, until: bool) -> bool:
    """Whether the loop's condition is ``[IFS=…] read …`` (after ``!`` for ``until``): the
    loop ``_read_while`` unrolls. Looks ahead without moving."""
    start = reader.i
    try:
        first = reader.token()
        if until:
            if first is None or not isinstance(first[1], Word) or first[1].source != "!":
                return False
            first = reader.token()
        if first is not None and isinstance(first[1], Word) and first[1].text.startswith("IFS="):
            first = reader.token()
        return first is not None and isinstance(first[1], Word) and first[1].source == "read"
    except (Denied, NeedsStage):
        return False
    finally:
        reader.i = start


def _read_repeat(reader: Cursor, producer: str | None, *, until: bool) -> RawRepeat:
    """``while LIST; do LIST; done`` or ``until LIST; do LIST; done``, after the keyword."""
    keyword, article = ("until", "an") if until else ("while", "a")
    if producer is not None:
        raise Denied(f"a pipe into {article} `{keyword}` loop is evaluated only for `while read`")
    reader.loop_names = ()
    try:
        condition = reader.script(frozenset(("do",)))
        body = reader.script(_DONE)
    finally:
        reader.loop_names = None
    following = reader.peek()
    if following is not None and following[0] == "redirect":
        raise Denied(
            f"a redirection of {article} `{keyword}` loop is evaluated only for `while read`"
        )
    reader.evaluated(
        f"{article} `{keyword} LIST; do LIST; done` loop: both lists judged, run as written "
        "within the shell's timeout (compound)"
    )
    return RawRepeat(until, condition, body)


def _read_for(reader: Cursor) -> RawLoop:
    """``for NAME in WORDS; do BODY; done``, after the ``for``."""
    name = reader.token()
    if name is None or not isinstance(name[1], Word):
        raise Denied("`for` needs a variable name")
    variable = name[1]
    if variable.source != variable.text or _NAME.fullmatch(variable.text) is None:
        raise Denied(f"`for {shown(variable.source)}` is not a loop plan mode unrolls")
    keyword = reader.token()
    if keyword is None or not isinstance(keyword[1], Word) or keyword[1].source != "in":
        raise Denied("only `for NAME in WORDS; do …; done` loops are unrolled")
    words: list[Word] = []
    while True:
        token = reader.token()
        if token is None:
            raise Denied("a `for` loop has no `do`")
        if token[0] == "word" and isinstance(token[1], Word):
            words.append(token[1])
            continue
        if token[1] in (";", "\n"):
            break
        raise Denied(f"`{shown(str(token[1]))}` in a `for` loop's list is not allowed")
    return RawLoop((variable.text,), words, _loop_body(reader, (variable.text,)))


def _read_while(reader: Cursor, producer: str | None, *, until: bool) -> RawLoop:
    """``while [IFS=…] read [-r] NAME…; do BODY; done [< FILE]``, after the ``while``, or
    ``until ! [IFS=…] read [-r] NAME…; …`` after the ``until``."""
    keyword = "until" if until else "while"
    form = "until ! read" if until else "while read"
    words: list[Word] = []
    while (token := reader.token()) is not None and token[1] not in (";", "\n"):
        if not isinstance(token[1], Word):
            raise Denied(f"`{shown(str(token[1]))}` in a `{keyword}` condition is not evaluated")
        words.append(token[1])
    if until:
        words = words[1:]  # the `!` (`_reads_lines`)
    ifs = read_ifs(words[0]) if words and words[0].text.startswith("IFS=") else None
    words = words[1:] if ifs is not None else words
    raw = [w.source for w in words[1:2]] == ["-r"]
    names = tuple(w.source for w in (words[2:] if raw else words[1:]))
    if (
        [w.source for w in words[:1]] != ["read"]
        or not names
        or any(_NAME.fullmatch(n) is None or n in _SPECIAL_NAMES for n in names)
        or len(set(names)) != len(names)
        or len(names) > len(LOOP_VALUES)
    ):
        raise Denied(
            f"only `{form} [-r] NAME…; do …; done` (optionally `IFS=… read`, at most "
            f"{len(LOOP_VALUES)} distinct names) over a read-only input is evaluated"
        )
    body = _loop_body(reader, names)
    following = reader.peek()
    if following is not None and following[0] == "redirect":
        if producer is not None or following[1] != "<":
            raise Denied(f"a `{form}` loop reads from one file with `<` or from a pipe")
        reader.token()
        target = reader.target("<")
        check_braces(target)
        if is_glob(target):
            raise Denied(f"the loop's input `{shown(target.source)}` is a glob")
        producer = "cat -- " + quote(target.text)
    if producer is None:
        raise Denied(f"a `{form}` loop needs its input: `< FILE` or a pipe into it")
    output = reader.inner_output(producer.strip(), f"`{form}` loop's input")
    if len(names) > 1 or ifs not in (None, ""):
        reader.evaluated(
            "`read` into several names or with an `IFS`: each line split as bash's `read` "
            "splits it (compound)"
        )
    lines = read_lines(output, raw=raw)
    return RawLoop(names, [], body, [read_fields(line, len(names), ifs) for line in lines])
