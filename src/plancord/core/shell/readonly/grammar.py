"""The list grammar of the read-only reader: commands joined by pipes, ``&&``, ``||``, ``;``
and line breaks into pipelines and lists, and the places where a compound command
(``compound``) may start or a list end (a closing keyword or ``)``).

The lexer (``reading.Reader``, seen through ``cursor.Cursor``) gives the tokens; this
module says what they make.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly import compound
from plancord.core.shell.readonly.cursor import Cursor, Token
from plancord.core.shell.readonly.options import names
from plancord.core.shell.readonly.raw import (
    Element,
    RawCommand,
    RawConditional,
    RawScript,
    RawSubshell,
    Word,
)
from plancord.core.shell.readonly.verdict import Denied, shown

REFUSED_OPERATORS: Final = {
    ";;": "`;;` ends a `case` list, and here there is none to end",
    ";&": "`;&` falls through to the next `case` list, which plan mode does not run",
    "|&": "`|&` pipes standard error; write `2>&1 |` instead",
    "&": "`&` runs a command in the background",
    "<>": "`<>` opens a file for writing",
    "(": "a `(` inside a command is not read: subshells start a command",
    ")": "a `)` here closes nothing plan mode reads as a subshell",
}
RESERVED_WORDS: Final = names(
    "if then else elif fi case esac for select while until do done in function time "
    "coproc { } [[ ]] !"
)
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")


def _ends(token: Token, until: frozenset[str]) -> bool:
    kind, value = token
    if isinstance(value, Word):
        return value.source in until
    return kind == "op" and value in (")", ";;") and value in until


def read_list(reader: Cursor, until: frozenset[str]) -> RawScript:
    """Read a list to the end of the text, or to one of the keywords ``until`` (or ``)``)
    at a command's start; ``ended`` says which one ended it (None: the text's end)."""
    result = RawScript()
    pipeline: list[Element] = []
    command = RawCommand()
    closed = False  # the pipeline's last element is a `[[ … ]]` or `( … )`, complete
    pending: str | None = None  # a connector or pipe waiting for the next command
    started = pipe_at = reader.i  # where the pipeline's text starts; its last `|`
    negated = False  # the pipeline began with `!`
    reader.ended = None

    def whole(elements: list[Element]) -> list[Element]:
        """The pipeline as it stands in its list: ``! P`` as the group ``! { P; }``."""
        nonlocal negated
        if not negated:
            return elements
        negated = False
        return [RawSubshell(RawScript([elements]), group=True, negated=True)]

    def finish_command(after: str) -> None:
        nonlocal command, closed
        if closed:
            closed = False
            return
        if not command.words and not command.redirects:
            raise Denied(f"`{after}` has no command before it")
        if not command.words:
            raise Denied("a redirection needs a command")
        pipeline.append(command)
        command = RawCommand()

    while True:
        before = reader.i
        token = reader.token()
        at_start = not command.words and not command.redirects and not closed
        if token is None or ((at_start or token[1] in (")", ";;")) and _ends(token, until)):
            if token is None and until:
                raise Denied(f"`{'`, `'.join(sorted(until))}` is missing")
            if pending in ("|", "&&", "||"):
                raise Denied(f"the list ends with `{pending}`, so bash would wait for more")
            if command.words or command.redirects or closed:
                finish_command("end")
            if pipeline:
                result.pipelines.append(whole(pipeline))
            elif result.connectors:
                result.connectors.pop()  # a trailing `;` or line break joins nothing
            if not result.pipelines:
                raise Denied("the list runs nothing" if until else "the command runs nothing")
            reader.ended = None if token is None else str(getattr(token[1], "source", token[1]))
            return result
        kind, value = token
        if not pipeline and at_start:
            started = before
        starter = value.source if isinstance(value, Word) else value
        if at_start and not pipeline and starter == "!" and isinstance(value, Word):
            if negated:
                raise Denied("`! !` is not evaluated; write the pipeline once")
            negated = True
            reader.evaluated("`! PIPELINE`: its status inverted, run as `! { …; }` (grammar)")
            continue
        if at_start and starter in compound.STARTERS:
            producer = reader.s[started:pipe_at] if pipeline and pending == "|" else None
            joiner = result.connectors[-1] if result.pipelines else None
            element = compound.read_compound(reader, starter, joiner, producer)
            if not isinstance(element, (RawCommand, RawConditional, RawSubshell)) and (
                negated or compound.joined(reader, joiner if not pipeline else "|")
            ):
                element = RawSubshell(RawScript([element]), group=True)
            if isinstance(element, (RawCommand, RawConditional, RawSubshell)):
                pipeline.append(element)
                closed = True
                pending = None
            else:
                pipeline = []
                result.pipelines.append(element)
                pending = compound.after_whole(reader)
                if pending is not None:
                    result.connectors.append(pending)
                    pending = pending if pending != ";" else None
            continue
        if closed and (kind != "op" or value == "("):
            raise Denied(
                f"`{shown(str(getattr(value, 'source', value)))}` after `]]` or `)`: only "
                "a pipe or a connector may follow"
            )
        if kind == "word":
            assert isinstance(value, Word)
            redirect = reader.redirect_after(value)
            if redirect is not None:
                command.redirects.append(redirect)
            else:
                check_word_place(command, value)
                command.words.append(value)
            pending = None
            continue
        assert isinstance(value, str)
        if kind == "redirect":
            command.redirects.append(reader.redirection(None, value))
            pending = None
            continue
        if value in ("(", ")", ";;"):
            raise Denied(REFUSED_OPERATORS[value])
        if value == "|":
            pipe_at = before
            finish_command("|")
            pending = "|"
            continue
        # a connector (&&, ||, ;) or a line break
        if not command.words and not command.redirects and not closed:
            if value == "\n" and (pending is not None or not pipeline):
                continue  # a blank line, or a line break after `|`, `&&` or `||`
            if not pipeline:
                raise Denied(f"`{shown(value)}` has no command before it")
        finish_command(value)
        result.pipelines.append(whole(pipeline))
        result.connectors.append(";" if value == "\n" else value)
        pipeline = []
        pending = value if value in ("&&", "||") else None


def check_word_place(command: RawCommand, word: Word) -> None:
    if command.words:
        return
    if word.source in RESERVED_WORDS:
        raise Denied(f"the shell keyword `{word.source}` is not read-only shell plan mode runs")
    match = _ASSIGNMENT.match(word.source)
    if match is not None:
        raise Denied(
            f"the assignment `{shown(word.source, 30)}` sets a variable, which changes what "
            "commands do"
        )
