"""Read a command line once, the way bash reads it, into words, redirections and connectors.

This module is the lexer: words made of plain characters, single quotes, double quotes and
backslash escapes, operators and comments; ``grammar`` puts the tokens together into
pipelines and lists, and ``compound`` reads ``for``, ``while read``, ``if``, ``( … )``,
``[[ … ]]`` and ``(( … ))``. Expansions are read only where their value is known here:
the loop variable in a loop's body, ``$(…)``, ``<(…)`` and backquotes once their output is
known (``substitution``; until then the reader asks for a stage), ``$((…))`` of
literals (``arithmetic``), and ``$PWD``, ``~+`` and a quoted ``$HOME`` (``parameters``).
Every other expansion (``$NAME``, ``${…}``, ``$'…'``, tilde) is refused with a reason
naming it. Here-documents are read with ``heredoc``; words are built by ``word_builder``.

The lexer follows bash's rules for where a word ends and what a quote or backslash means,
and records for every character whether it was quoted, so that globs and braces (which
bash expands only when unquoted) are recognised exactly. What it produces is a description
(``raw.RawScript``); nothing here runs or touches the file system.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from plancord.core.shell.readonly import arithmetic
from plancord.core.shell.readonly.cursor import Token
from plancord.core.shell.readonly.grammar import REFUSED_OPERATORS, read_list
from plancord.core.shell.readonly.heredoc import (
    HERE_DOCUMENT_OPERATORS,
    HERE_OPERATORS,
    PendingDocument,
    read_bodies,
)
from plancord.core.shell.readonly.parameters import (
    home_reference,
    known_value,
    parameter_at,
    pwd_value,
    refuse_dollar,
)
from plancord.core.shell.readonly.raw import (
    LOOP_VALUES,
    RawRedirect,
    RawScript,
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
from plancord.core.shell.readonly.word_builder import WordBuilder

METACHARACTERS: Final = frozenset(" \t\n|&;<>()")
_GLOB_OR_SPACE: Final = frozenset("*?[ \t\n")
_DOUBLE_QUOTE_ESCAPES: Final = frozenset('$`"\\\n')
_OPERATORS: Final = (
    "&>>", "<<<", "<<-", "&&", "||", ";;", ";&", "|&", "&>", ">>", ">&", "<&", "<<", "<>", ">|",
    "|", "&", ";", "<", ">", "(", ")",
)  # fmt: skip


def read(text: str, outputs: Mapping[str, str] | None = None, pwd: str | None = None) -> RawScript:
    """Read ``text`` into a ``RawScript``; raise ``Denied`` for anything outside the subset.

    ``outputs`` holds the output of each command substitution already run (by its inner
    text); one not there raises ``NeedsStage``. ``pwd`` is the directory the line starts
    in, the value of ``$PWD`` (``parameters``; None: refused).
    """
    return Reader(text, outputs or {}, pwd).whole()


class Reader:
    """The lexer and the list grammar; ``compound`` and ``conditional`` read the compound
    commands through ``token``, ``peek``, ``word`` and ``script``."""

    def __init__(self, text: str, outputs: Mapping[str, str], pwd: str | None = None) -> None:
        self.s = text
        self.i = 0
        self.outputs = outputs
        self.pwd = pwd
        self.uses_pwd = False  # `$PWD` or `~+` was read: a `cd` on the line would change it
        self.constructs: dict[str, None] = {}  # what was evaluated, in order (for --explain)
        self.substitutions = 0
        self.loop_names: tuple[str, ...] | None = None  # a loop's variables, in its body
        self.in_conditional = False  # inside `[[ … ]]`, where a lone `$` stays unquoted
        self.in_branch = False  # inside an `if`
        self.depth = 0  # of subshells
        self.ended: str | None = None  # the keyword or `)` that ended the last ``script``
        self.documents: list[PendingDocument] = []  # `<<` whose bodies follow the line
        self.bodies_end: dict[int, int] = {}  # a line break's index: where its bodies end

    def whole(self) -> RawScript:
        """The whole text, read."""
        script = self.script()
        if self.documents:
            raise Denied("a here-document's body must follow its line; the command ends first")
        if self.ended is not None:
            raise Denied(f"`{shown(self.ended)}` has nothing to close")
        script.uses_pwd = self.uses_pwd
        script.constructs = tuple(self.constructs)
        return script

    def evaluated(self, construct: str) -> None:
        """Note that ``construct`` was read and evaluated (``check-bash --explain``)."""
        self.constructs[construct] = None

    def script(self, until: frozenset[str] = frozenset()) -> RawScript:
        """Read a list to the end of the text, or to one of the keywords ``until`` (or ``)``)
        at a command's start; ``ended`` says which one ended it (None: the text's end)."""
        return read_list(self, until)

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
                if self.documents:
                    self.bodies_end[self.i] = read_bodies(s, self.i + 1, self.documents)
                    self.documents = []
                self.i = self.bodies_end.get(self.i, self.i + 1)
                return "op", "\n"
            elif s.startswith("<(", self.i):
                return "word", self._process_substitution()
            elif c in METACHARACTERS:
                operator = next(op for op in _OPERATORS if s.startswith(op, self.i))
                self.i += len(operator)
                if operator in REFUSED_OPERATORS and operator not in ("(", ")", ";;"):
                    raise Denied(REFUSED_OPERATORS[operator])
                if operator in ("<", ">", ">>", ">|", "&>", "&>>", ">&", "<&", *HERE_OPERATORS):
                    return "redirect", operator
                return "op", operator
            else:
                return "word", self.word()
        return None

    def word(self) -> Word:
        s, start = self.s, self.i
        word = WordBuilder()
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
                word.empty_quotes |= end == self.i + 1
                self.i = end + 1
            elif c == '"':
                before = len(word.chars)
                self._double_quoted(word)
                word.empty_quotes |= len(word.chars) == before
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
                refuse_dollar(self.s, self.i, quoted=False)
                word.add("$", not self.in_conditional)
                self.i += 1
            elif c == "~" and word.tilde_position():
                following = s[self.i + 2 : self.i + 3]
                if (
                    self.pwd is None
                    or not s.startswith("~+", self.i)
                    or following
                    not in (
                        "",
                        "/",
                        *METACHARACTERS,
                    )
                ):
                    raise Denied("tilde expansion (`~`) reaches outside the workspace")
                self.uses_pwd = True
                self.evaluated("`~+`: the starting directory (parameters)")
                word.add(self.pwd, True)  # bash neither splits nor globs a tilde's value
                self.i += 2
            else:
                word.add(c, False)
                self.i += 1
        return word.build(s[start : self.i])

    def _double_quoted(self, word: WordBuilder) -> None:
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
                refuse_dollar(self.s, self.i, quoted=True)
            word.add(c, True)
            self.i += 1
        raise Denied("a double quote is not closed")

    def _loop_value(self, word: WordBuilder, *, quoted: bool) -> bool:
        """A use of a loop variable in its body (``$f``, ``${f}``) becomes its stand-in
        (``LOOP_VALUES``)."""
        for stand_in, name in zip(LOOP_VALUES, self.loop_names or (), strict=False):
            for form in (f"${{{name}}}", f"${name}"):
                if self.s.startswith(form, self.i):
                    end = self.i + len(form)
                    following = self.s[end : end + 1]
                    if form[1] != "{" and (following.isalnum() or following == "_"):
                        continue  # `$fx` is another variable
                    word.add(stand_in, quoted)
                    self.i = end
                    return True
        return False

    def _expansion(self, word: WordBuilder, *, quoted: bool) -> bool:
        """A ``$`` that starts what the reader evaluates: the loop variable, ``$(…)``, or
        literal arithmetic ``$((…))``."""
        if self._loop_value(word, quoted=quoted) or self._substitution(word, quoted=quoted):
            return True
        if self._parameter(word, quoted=quoted):
            return True
        if not self.s.startswith("$((", self.i):
            return False
        value, self.i = arithmetic.expansion(self.s, self.i)
        word.add(value, True)
        return True

    def _parameter(self, word: WordBuilder, *, quoted: bool) -> bool:
        """``$PWD`` (and its four pattern removals), ``$OLDPWD``, ``$PATH`` and ``$HOME``
        (``parameters``)."""
        found = parameter_at(self.s, self.i) if self.pwd is not None else None
        if found is None or self.pwd is None:
            return False
        name, operation, end = found
        if name == "HOME":
            if not quoted and self.in_conditional:
                raise Denied("an unquoted `$HOME` in `[[ … ]]` would be a pattern; quote it")
            word.add(home_reference(operation, quoted=quoted), True)
            self.evaluated("`$HOME`: shown, never opened (parameters)")
            self.i = end
            return True
        if name == "PWD":
            self.evaluated("`$PWD`: the starting directory (parameters)")
            value = pwd_value(self.pwd, operation)
        else:
            self.evaluated(f"`${name}`: its value in the sandbox's environment (parameters)")
            value = known_value(name, operation)
        self.uses_pwd |= name != "PATH"
        if quoted:
            word.add(value, True)
        elif self.in_conditional:
            if _GLOB_OR_SPACE & set(value):
                raise Denied(f"an unquoted `${name}` in `[[ … ]]` would be a pattern; quote it")
            word.add(value, True)
        else:
            word.add_fields(value)
        self.i = end
        return True

    def _backquoted(self, word: WordBuilder, *, quoted: bool) -> None:
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
        self._add_output(word, inner, self.inner_output(inner, "command substitution"), quoted)
        self.i = end + 1

    def inner_output(self, inner: str, kind: str) -> str:
        if self.loop_names is not None:
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

    def _substitution(self, word: WordBuilder, *, quoted: bool) -> bool:
        """``$(inner)`` becomes the output of ``inner`` as data (see ``substitution``)."""
        if not self.s.startswith("$(", self.i) or self.s.startswith("$((", self.i):
            return False
        inner, end = inner_text(self.s, self.i)
        self._add_output(word, inner, self.inner_output(inner, "command substitution"), quoted)
        self.i = end
        return True

    def _add_output(self, word: WordBuilder, inner: str, output: str, quoted: bool) -> None:
        """A substitution's output in the word: one piece of it when quoted; split into
        fields (and globbed) when not; inside ``[[ … ]]`` (no splitting) a pattern."""
        split = not quoted and not self.in_conditional
        value = substituted(inner, output, quoted=quoted, split=split)
        if split:
            self.evaluated(
                "an unquoted substitution: split into words at white space and globbed, as "
                "bash does; each word judged (expansion.fields)"
            )
            word.add_fields(value)
        else:
            word.add(value, quoted)  # unquoted in a pattern: active

    # -- redirections ----------------------------------------------------------------------

    def redirect_after(self, word: Word) -> RawRedirect | None:
        """A word of digits directly followed by ``<`` or ``>`` is a descriptor number."""
        s = self.s
        if not (word.source.isdigit() and self.i < len(s) and s[self.i] in "<>"):
            return None
        token = self.token()
        assert token is not None
        assert token[0] == "redirect"
        assert isinstance(token[1], str)
        fd = int(word.source) if len(word.source) < 4 else 1000
        return self.redirection(fd, token[1])

    def redirection(self, fd: int | None, op: str) -> RawRedirect:
        """The redirection ``op`` just read; a here-document's body is filled in at the end
        of its line (``heredoc``)."""
        target = self.target(op)
        redirect = RawRedirect(fd, op, target)
        if op == "<<<":
            self.evaluated("a here-string: input given as quoted text (heredoc)")
        if op in HERE_DOCUMENT_OPERATORS:
            self.evaluated("a here-document: its body given as quoted text (heredoc)")
            if target.separators is not None:
                raise Denied("a here-document's delimiter is a substitution")
            self.documents.append(PendingDocument(redirect, target, op == "<<-"))
        return redirect

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
