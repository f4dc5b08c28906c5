"""Read a command line once, the way bash reads it, into words, redirections and connectors.

Only the part of bash's grammar that a read-only command needs is accepted: words made of
plain characters, single quotes, double quotes and backslash escapes; pipes; ``&&``, ``||``,
``;`` and line breaks; ``<`` from a file; ``>`` to a file (judged later: only ``/dev/null``);
``N>&M``; comments; and ``for NAME in WORDS; do …; done`` as a whole element of the line,
its body read with the loop variable marked where it is used (``loops`` unrolls it). Every
other construct is refused here with a reason naming it:
expansions whose value is not known (``$NAME``, ``${…}``, backquotes, ``$((…))``,
``$'…'``), tilde expansion, subshells and groups, background jobs, here-documents and
process substitution, assignments and reserved words. A command substitution ``$(…)`` is
read as data once its output is known (``substitution``); until then the reader asks for it.

The lexer follows bash's rules for where a word ends and what a quote or backslash means,
and records for every character whether it was quoted, so that globs and braces (which
bash expands only when unquoted) are recognised exactly. What it produces is a description
(``raw.RawScript``); nothing here runs or touches the file system.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from plancord.core.shell.readonly import arithmetic, compound
from plancord.core.shell.readonly.options import names
from plancord.core.shell.readonly.raw import (
    LOOP_VALUE,
    Element,
    RawCommand,
    RawConditional,
    RawRedirect,
    RawScript,
    RawSubshell,
    Word,
)
from plancord.core.shell.readonly.substitution import (
    MAX_SUBSTITUTIONS,
    NeedsStage,
    inner_text,
    piped_input,
    substituted,
)
from plancord.core.shell.readonly.verdict import Denied, shown

METACHARACTERS: Final = frozenset(" \t\n|&;<>()")
_EXPANSION_AFTER_DOLLAR: Final = frozenset(
    "{([_@*#?-$!0123456789'\"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_EXPANSION_IN_DOUBLE_QUOTES: Final = _EXPANSION_AFTER_DOLLAR - frozenset("'\"")
_DOUBLE_QUOTE_ESCAPES: Final = frozenset('$`"\\\n')
_OPERATORS: Final = (
    "&>>", "<<<", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">&", "<&", "<<", "<>", ">|",
    "|", "&", ";", "<", ">", "(", ")",
)  # fmt: skip
_REFUSED_OPERATORS: Final = {
    ";;": "`;;` belongs to `case`, which plan mode does not run",
    ";&": "`;&` belongs to `case`, which plan mode does not run",
    "|&": "`|&` pipes standard error; write `2>&1 |` instead",
    "&": "`&` runs a command in the background",
    "<<": "here-documents are not read-only shell plan mode can check",
    "<<<": "here-strings are not read-only shell plan mode can check",
    "<>": "`<>` opens a file for writing",
    "<&": "`<&` duplicates input descriptors",
    "(": "subshells, process substitution and `(` are not allowed",
    ")": "subshells, process substitution and `)` are not allowed",
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
    return kind == "op" and value == ")" and value in until


def is_keyword(value: object, keyword: str) -> bool:
    """Whether a token is the reserved word ``keyword``, written plainly (bash does not
    take a quoted or escaped ``done`` for the keyword)."""
    return isinstance(value, Word) and value.source == keyword


class _WordBuilder:
    __slots__ = ("chars", "quoted")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.quoted: list[bool] = []

    def add(self, text: str, quoted: bool) -> None:
        self.chars.extend(text)
        self.quoted.extend([quoted] * len(text))

    def tilde_position(self) -> bool:
        """Whether an unquoted ``~`` here would be expanded (word start, or after ``=``/``:``)."""
        if not self.chars:
            return True
        return not self.quoted[-1] and self.chars[-1] in "=:"


def read(text: str, outputs: Mapping[str, str] | None = None) -> RawScript:
    """Read ``text`` into a ``RawScript``; raise ``Denied`` for anything outside the subset.

    ``outputs`` holds the output of each command substitution already run (by its inner
    text); one not there raises ``NeedsStage``.
    """
    reader = Reader(text, outputs or {})
    script = reader.script()
    if reader.ended is not None:
        raise Denied(f"`{shown(reader.ended)}` has nothing to close")
    return script


Token = tuple[str, Word | str]


class Reader:
    """The lexer and the list grammar; ``compound`` and ``conditional`` read the compound
    commands through ``token``, ``peek``, ``word`` and ``script``."""

    def __init__(self, text: str, outputs: Mapping[str, str]) -> None:
        self.s = text
        self.i = 0
        self.outputs = outputs
        self.substitutions = 0
        self.loop_name: str | None = None  # the loop variable, while reading a loop body
        self.in_conditional = False  # inside `[[ … ]]`, where a lone `$` stays unquoted
        self.in_branch = False  # inside an `if`
        self.ended: str | None = None  # the keyword or `)` that ended the last ``script``

    def script(self, until: frozenset[str] = frozenset()) -> RawScript:
        """Read a list to the end of the text, or to one of the keywords ``until`` (or ``)``)
        at a command's start; ``ended`` says which one ended it (None: the text's end)."""
        result = RawScript()
        pipeline: list[Element] = []
        command = RawCommand()
        closed = False  # the pipeline's last element is a `[[ … ]]` or `( … )`, complete
        pending: str | None = None  # a connector or pipe waiting for the next command
        started = pipe_at = self.i  # where the pipeline's text starts; its last `|`
        self.ended = None

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
            before = self.i
            token = self.token()
            at_start = not command.words and not command.redirects and not closed
            if token is None or ((at_start or token[1] == ")") and _ends(token, until)):
                if token is None and until:
                    raise Denied(f"`{'`, `'.join(sorted(until))}` is missing")
                if pending in ("|", "&&", "||"):
                    raise Denied(f"the list ends with `{pending}`, so bash would wait for more")
                if command.words or command.redirects or closed:
                    finish_command("end")
                if pipeline:
                    result.pipelines.append(pipeline)
                elif result.connectors:
                    result.connectors.pop()  # a trailing `;` or line break joins nothing
                if not result.pipelines:
                    raise Denied("the list runs nothing" if until else "the command runs nothing")
                self.ended = None if token is None else str(getattr(token[1], "source", token[1]))
                return result
            kind, value = token
            if not pipeline and at_start:
                started = before
            starter = value.source if isinstance(value, Word) else value
            if at_start and starter in compound.STARTERS:
                producer = self.s[started:pipe_at] if pipeline and pending == "|" else None
                joiner = result.connectors[-1] if result.pipelines else None
                element = compound.read_compound(self, starter, joiner, producer)
                if isinstance(element, (RawCommand, RawConditional, RawSubshell)):
                    pipeline.append(element)
                    closed = True
                else:
                    pipeline = []
                    result.pipelines.append(element)
                    pending = compound.after_whole(self)
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
                redirect = self._redirect_after(value)
                if redirect is not None:
                    command.redirects.append(redirect)
                else:
                    self._check_word_place(command, value)
                    command.words.append(value)
                pending = None
                continue
            assert isinstance(value, str)
            if kind == "redirect":
                command.redirects.append(RawRedirect(None, value, self.target(value)))
                pending = None
                continue
            if value in ("(", ")"):
                raise Denied(_REFUSED_OPERATORS[value])
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
            result.pipelines.append(pipeline)
            result.connectors.append(";" if value == "\n" else value)
            pipeline = []
            pending = value if value in ("&&", "||") else None

    def peek(self) -> Token | None:
        """The next token, without reading past it."""
        at = self.i
        try:
            return self.token()
        finally:
            self.i = at

    # -- tokens ----------------------------------------------------------------------------

    def token(self) -> tuple[str, Word | str] | None:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\\\n", self.i):
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = len(s) if end < 0 else end
            elif c == "\n":
                self.i += 1
                return "op", "\n"
            elif s.startswith("<(", self.i):
                return "word", self._process_substitution()
            elif c in METACHARACTERS:
                operator = next(op for op in _OPERATORS if s.startswith(op, self.i))
                self.i += len(operator)
                if operator in _REFUSED_OPERATORS and operator not in ("(", ")"):
                    raise Denied(_REFUSED_OPERATORS[operator])
                if operator in ("<", ">", ">>", ">|", "&>", "&>>", ">&"):
                    return "redirect", operator
                return "op", operator
            else:
                return "word", self.word()
        return None

    def word(self) -> Word:
        s, start = self.s, self.i
        word = _WordBuilder()
        while self.i < len(s):
            c = s[self.i]
            if c in METACHARACTERS:
                if s.startswith("<(", self.i):
                    raise Denied("a process substitution joined to other text is not evaluated")
                break
            if c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise Denied("a single quote is not closed")
                word.add(s[self.i + 1 : end], True)
                self.i = end + 1
            elif c == '"':
                self._double_quoted(word)
            elif c == "\\":
                if self.i + 1 >= len(s):
                    raise Denied("the command ends with a backslash")
                if s[self.i + 1] != "\n":
                    word.add(s[self.i + 1], True)
                self.i += 2
            elif c == "`":
                self._backquoted(word, quoted=False)
            elif c == "$":
                if self._expansion(word, quoted=False):
                    continue
                self._dollar(quoted=False)
                word.add("$", not self.in_conditional)
                self.i += 1
            elif c == "~" and word.tilde_position():
                raise Denied("tilde expansion (`~`) reaches outside the workspace")
            else:
                word.add(c, False)
                self.i += 1
        return Word("".join(word.chars), tuple(word.quoted), s[start : self.i])

    def _double_quoted(self, word: _WordBuilder) -> None:
        s = self.s
        self.i += 1
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            if c == "\\" and self.i + 1 < len(s) and s[self.i + 1] in _DOUBLE_QUOTE_ESCAPES:
                if s[self.i + 1] != "\n":
                    word.add(s[self.i + 1], True)
                self.i += 2
                continue
            if c == "`":
                self._backquoted(word, quoted=True)
                continue
            if c == "$":
                if self._expansion(word, quoted=True):
                    continue
                self._dollar(quoted=True)
            word.add(c, True)
            self.i += 1
        raise Denied("a double quote is not closed")

    def _loop_value(self, word: _WordBuilder, *, quoted: bool) -> bool:
        """A use of the loop variable in its body (``$f``, ``${f}``) becomes ``LOOP_VALUE``."""
        if self.loop_name is None:
            return False
        for form in (f"${{{self.loop_name}}}", f"${self.loop_name}"):
            if self.s.startswith(form, self.i):
                end = self.i + len(form)
                following = self.s[end : end + 1]
                if form[1] != "{" and (following.isalnum() or following == "_"):
                    continue  # `$fx` is another variable
                word.add(LOOP_VALUE, quoted)
                self.i = end
                return True
        return False

    def _expansion(self, word: _WordBuilder, *, quoted: bool) -> bool:
        """A ``$`` that starts what the reader evaluates: the loop variable, ``$(…)``, or
        literal arithmetic ``$((…))``."""
        if self._loop_value(word, quoted=quoted) or self._substitution(word, quoted=quoted):
            return True
        if not self.s.startswith("$((", self.i):
            return False
        value, self.i = arithmetic.expansion(self.s, self.i)
        word.add(value, True)
        return True

    def _backquoted(self, word: _WordBuilder, *, quoted: bool) -> None:
        """`` `inner` `` read as ``$(inner)`` when bash's backquote rules leave its text as
        written: no backslash inside (bash removes some of them), and inside double quotes
        no double quote (POSIX leaves that undefined)."""
        end = self.s.find("`", self.i + 1)
        if end < 0:
            raise Denied("a backquote is not closed")
        inner = self.s[self.i + 1 : end]
        if "\\" in inner:
            raise Denied(
                "a backslash inside backquotes is read by bash's backquote rules; write "
                "`$(…)` instead"
            )
        if quoted and '"' in inner:
            raise Denied('a `"` inside backquotes inside double quotes is ambiguous; write `$(…)`')
        if inner_text(f"$({inner})", 0) != (inner, len(inner) + 3):
            raise Denied("`)` inside backquotes is not evaluated; write `$(…)`")
        output = self.inner_output(inner, "command substitution")
        word.add(substituted(inner, output, quoted=quoted), True)
        self.i = end + 1

    def inner_output(self, inner: str, kind: str) -> str:
        if self.loop_name is not None:
            raise Denied("a substitution inside a loop is not evaluated")
        self.substitutions += 1
        if self.substitutions > MAX_SUBSTITUTIONS:
            raise Denied(f"the command line has more than {MAX_SUBSTITUTIONS} substitutions")
        output = self.outputs.get(inner)
        if output is None:
            raise NeedsStage(inner, kind)
        return output

    def _process_substitution(self) -> Word:
        """``<(inner)`` becomes a word standing for a pipe holding the output of ``inner``."""
        start = self.i
        inner, end = inner_text(self.s, self.i)
        following = self.s[end : end + 1]
        if following and following not in METACHARACTERS:
            raise Denied("a process substitution joined to other text is not evaluated")
        text = piped_input(self.inner_output(inner, "process substitution"))
        self.i = end
        return Word(text, (True,) * len(text), self.s[start:end])

    def _substitution(self, word: _WordBuilder, *, quoted: bool) -> bool:
        """``$(inner)`` becomes the output of ``inner`` as data (see ``substitution``)."""
        if not self.s.startswith("$(", self.i) or self.s.startswith("$((", self.i):
            return False
        inner, end = inner_text(self.s, self.i)
        value = substituted(inner, self.inner_output(inner, "command substitution"), quoted=quoted)
        for char in value:
            word.add(char, True)
        self.i = end
        return True

    def _dollar(self, *, quoted: bool) -> None:
        """Refuse a ``$`` that starts an expansion; a ``$`` that bash keeps literal passes."""
        following = self.s[self.i + 1 : self.i + 2]
        allowed = _EXPANSION_IN_DOUBLE_QUOTES if quoted else _EXPANSION_AFTER_DOLLAR
        if not following or following not in allowed:
            return
        if following == "(":
            raise Denied("command substitution (`$(…)`) runs a command plan mode cannot see")
        if following == "[":
            raise Denied("arithmetic expansion (`$[…]`) is not read-only shell")
        if following == "{":
            raise Denied(
                f"parameter expansion (`{shown(self._span(), 20)}`) has a value plan mode "
                "cannot know"
            )
        if following == "'":
            raise Denied("`$'…'` quoting is not read-only shell plan mode can check")
        if following == '"':
            raise Denied('`$"…"` quoting is not read-only shell plan mode can check')
        raise Denied(
            f"the variable `{shown(self._span(), 20)}` has a value plan mode cannot know "
            "(bash would expand and split it)"
        )

    def _span(self) -> str:
        match = re.match(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|.)", self.s[self.i :])
        return match.group() if match else "$"

    # -- redirections ----------------------------------------------------------------------

    def _redirect_after(self, word: Word) -> RawRedirect | None:
        """A word of digits directly followed by ``<`` or ``>`` is a descriptor number."""
        s = self.s
        if not (word.source.isdigit() and self.i < len(s) and s[self.i] in "<>"):
            return None
        token = self.token()
        assert token is not None
        assert token[0] == "redirect"
        assert isinstance(token[1], str)
        fd = int(word.source) if len(word.source) < 4 else 1000
        return RawRedirect(fd, token[1], self.target(token[1]))

    def target(self, op: str) -> Word:
        s = self.s
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if self.i < len(s) and s[self.i] == "(":
            raise Denied(
                "process substitution (`<(…)`, `>(…)`) runs a command plan mode cannot see"
            )
        if self.i >= len(s) or s[self.i] in METACHARACTERS:
            raise Denied(f"the redirection `{op}` has no target")
        return self.word()

    @staticmethod
    def _check_word_place(command: RawCommand, word: Word) -> None:
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
