"""Read a command line once, the way bash reads it, into words, redirections and connectors.

Only the part of bash's grammar that a read-only command needs is accepted: words made of
plain characters, single quotes, double quotes and backslash escapes; pipes; ``&&``, ``||``,
``;`` and line breaks; ``<`` from a file; ``>`` to a file (judged later: only ``/dev/null``);
``N>&M``; and comments. Every other construct is refused here with a reason naming it:
expansions whose value is not known (``$NAME``, ``${…}``, ``$(…)``, backquotes, ``$((…))``,
``$'…'``), tilde expansion, subshells and groups, background jobs, here-documents and
process substitution, assignments and reserved words.

The lexer follows bash's rules for where a word ends and what a quote or backslash means,
and records for every character whether it was quoted, so that globs and braces (which
bash expands only when unquoted) are recognised exactly. What it produces is a description
(``RawScript``); nothing here runs or touches the file system.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from plancord.core.shell.readonly.options import names
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


@dataclass(frozen=True, slots=True)
class Word:
    """A word after quote removal, with which characters were quoted (or escaped)."""

    text: str
    quoted: tuple[bool, ...]
    source: str

    def unquoted(self, index: int) -> bool:
        return not self.quoted[index]

    @property
    def fully_quoted(self) -> bool:
        return all(self.quoted)


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
class RawScript:
    pipelines: list[list[RawCommand]] = field(default_factory=list)
    connectors: list[str] = field(default_factory=list)


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


def read(text: str) -> RawScript:
    """Read ``text`` into a ``RawScript``; raise ``Denied`` for anything outside the subset."""
    return _Reader(text).script()


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def script(self) -> RawScript:
        result = RawScript()
        pipeline: list[RawCommand] = []
        command = RawCommand()
        pending: str | None = None  # a connector or pipe waiting for the next command

        def finish_command(after: str) -> None:
            nonlocal command
            if not command.words and not command.redirects:
                raise Denied(f"`{after}` has no command before it")
            if not command.words:
                raise Denied("a redirection needs a command")
            pipeline.append(command)
            command = RawCommand()

        while True:
            token = self._token()
            if token is None:
                break
            kind, value = token
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
                command.redirects.append(RawRedirect(None, value, self._target(value)))
                pending = None
                continue
            if value == "|":
                finish_command("|")
                pending = "|"
                continue
            # a connector (&&, ||, ;) or a line break
            if not command.words and not command.redirects:
                if value == "\n" and (pending is not None or not pipeline):
                    continue  # a blank line, or a line break after `|`, `&&` or `||`
                if not pipeline:
                    raise Denied(f"`{shown(value)}` has no command before it")
            finish_command(value)
            result.pipelines.append(pipeline)
            result.connectors.append(";" if value == "\n" else value)
            pipeline = []
            pending = value if value in ("&&", "||") else None
        if pending in ("|", "&&", "||"):
            raise Denied(f"the command ends with `{pending}`, so bash would wait for more")
        if command.words or command.redirects:
            finish_command("end")
        if pipeline:
            result.pipelines.append(pipeline)
        elif result.connectors:
            result.connectors.pop()  # a trailing `;` or line break joins nothing
        if not result.pipelines:
            raise Denied("the command runs nothing")
        return result

    # -- tokens ----------------------------------------------------------------------------

    def _token(self) -> tuple[str, Word | str] | None:
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
            elif c in METACHARACTERS:
                operator = next(op for op in _OPERATORS if s.startswith(op, self.i))
                self.i += len(operator)
                if operator in _REFUSED_OPERATORS:
                    raise Denied(_REFUSED_OPERATORS[operator])
                if operator in ("<", ">", ">>", ">|", "&>", "&>>", ">&"):
                    return "redirect", operator
                return "op", operator
            else:
                return "word", self._word()
        return None

    def _word(self) -> Word:
        s, start = self.s, self.i
        word = _WordBuilder()
        while self.i < len(s):
            c = s[self.i]
            if c in METACHARACTERS:
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
                raise Denied(
                    "command substitution (backquotes) runs a command plan mode cannot see"
                )
            elif c == "$":
                self._dollar(quoted=False)
                word.add("$", True)
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
                raise Denied(
                    "command substitution (backquotes) runs a command plan mode cannot see"
                )
            if c == "$":
                self._dollar(quoted=True)
            word.add(c, True)
            self.i += 1
        raise Denied("a double quote is not closed")

    def _dollar(self, *, quoted: bool) -> None:
        """Refuse a ``$`` that starts an expansion; a ``$`` that bash keeps literal passes."""
        following = self.s[self.i + 1 : self.i + 2]
        allowed = _EXPANSION_IN_DOUBLE_QUOTES if quoted else _EXPANSION_AFTER_DOLLAR
        if not following or following not in allowed:
            return
        if following == "(":
            if self.s.startswith("$((", self.i):
                raise Denied("arithmetic expansion (`$((…))`) is not read-only shell")
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
        token = self._token()
        assert token is not None
        assert token[0] == "redirect"
        assert isinstance(token[1], str)
        fd = int(word.source) if len(word.source) < 4 else 1000
        return RawRedirect(fd, token[1], self._target(token[1]))

    def _target(self, op: str) -> Word:
        s = self.s
        while self.i < len(s) and s[self.i] in " \t":
            self.i += 1
        if self.i < len(s) and s[self.i] == "(":
            raise Denied(
                "process substitution (`<(…)`, `>(…)`) runs a command plan mode cannot see"
            )
        if self.i >= len(s) or s[self.i] in METACHARACTERS:
            raise Denied(f"the redirection `{op}` has no target")
        return self._word()

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
