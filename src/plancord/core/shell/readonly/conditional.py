"""``[[ … ]]`` read with bash's conditional grammar, judged, and rendered so bash reads the
same test.

Inside ``[[ … ]]`` bash neither splits nor globs, but the right side of ``==``, ``=`` and
``!=`` is a pattern and the right side of ``=~`` a regular expression, in which a quoted
character is literal and an unquoted one is special; so those operands are rendered with
exactly the quoting they were written with (unquoted characters only from a short list that
bash reads as themselves there), and every other word is single-quoted. File tests check
their operand with the path rules. Nothing here has a side effect except what bash evaluates
as arithmetic: the operands of ``-eq``, ``-lt``… are arithmetic expressions, in which a
name's subscript (``a[$(touch x)]``) runs commands, so a conditional that compares integers
holds only integer literals; ``-v`` and ``-R`` (which evaluate subscripts too) are refused.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.cursor import Cursor
from plancord.core.shell.readonly.paths import Place, check_path
from plancord.core.shell.readonly.raw import RawConditional, Word
from plancord.core.shell.readonly.structure import Conditional, quote
from plancord.core.shell.readonly.verdict import Denied, shown

_FILE_TESTS: Final = frozenset(
    [
        "-a",
        "-b",
        "-c",
        "-d",
        "-e",
        "-f",
        "-g",
        "-h",
        "-k",
        "-p",
        "-r",
        "-s",
        "-u",
        "-w",
        "-x",
        "-G",
        "-L",
        "-N",
        "-O",
        "-S",
    ]
)
_STRING_TESTS: Final = frozenset(("-n", "-z", "-t", "-o"))
_REFUSED_TESTS: Final = {
    "-v": "looks up a variable and evaluates its array subscript, which can run commands",
    "-R": "looks up a variable and evaluates its array subscript, which can run commands",
}
_PATTERN: Final = frozenset(("==", "=", "!="))
_FILE_COMPARISONS: Final = frozenset(("-nt", "-ot", "-ef"))
_INTEGER: Final = frozenset(("-eq", "-ne", "-lt", "-le", "-gt", "-ge"))
_BINARY: Final = _PATTERN | _FILE_COMPARISONS | _INTEGER | {"=~"}
_RAW: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789*?[]!^-.+{}=,@%_/:"
)
_ACTIVE: Final = frozenset("()|\\<>&; \t\n'\"`")
"""Characters an unquoted expansion may bring into a pattern that bash reads as special
there, and that the lexer never leaves unquoted itself."""
_LITERAL_INTEGER: Final = re.compile(r"[-+]?[0-9]+")
_OPERATORS: Final = ("&&", "||", "(", ")", "<", ">")
_ENDS_WORD: Final = frozenset(" \t\n|&;<>()")


def read_conditional(reader: Cursor) -> RawConditional:
    """The tokens of ``[[ … ]]`` after the ``[[``, through the ``]]``."""
    s = reader.s
    tokens: list[Word | str] = []
    reader.in_conditional = True
    try:
        while True:
            while reader.i < len(s) and s[reader.i] in " \t\n":
                reader.i += 1
            if reader.i >= len(s):
                raise Denied("`[[` has no `]]`")
            at = reader.i
            if s.startswith("]]", at) and (at + 2 == len(s) or s[at + 2] in _ENDS_WORD):
                reader.i += 2
                break
            if s.startswith("<(", at):
                raise Denied("a process substitution inside `[[ … ]]` is not evaluated")
            operator = next((o for o in _OPERATORS if s.startswith(o, at)), None)
            if s.startswith("=~", at) and s[at + 2 : at + 3] in (" ", "\t"):
                tokens.append(Word("=~", (False, False), "=~"))
                reader.i += 2
            elif operator is not None:
                tokens.append(operator)
                reader.i += len(operator)
            elif s[at] in "#|&;":
                raise Denied(f"`{s[at]}` inside `[[ … ]]` is not read-only shell plan mode reads")
            else:
                tokens.append(reader.word())
    finally:
        reader.in_conditional = False
    if not tokens:
        raise Denied("an empty `[[ ]]` is a syntax error")
    return RawConditional(tokens)


def judge_conditional(raw: RawConditional, place: Place) -> Conditional:
    """The rendered conditional, after checking each operand for what bash does with it."""
    judge = _Judge(raw.tokens, place)
    judge.disjunction()
    if judge.at < len(raw.tokens):
        raise Denied(f"`{shown(_text(raw.tokens[judge.at]))}` in `[[ … ]]` is out of place")
    if judge.compares_integers:
        for token in raw.tokens:
            literal = isinstance(token, str) or _is_operator(token)
            if not literal and _LITERAL_INTEGER.fullmatch(_text_of_word(token)) is None:
                raise Denied(
                    f"`{shown(_text_of_word(token))}` in a `[[ … ]]` that compares integers: "
                    "bash evaluates those words as arithmetic, where a subscript can run "
                    "commands; only integer literals are allowed there"
                )
    return Conditional(tuple(judge.parts))


def _text_of_word(token: Word | str) -> str:
    return token.text if isinstance(token, Word) else token


def _text(token: Word | str) -> str:
    return token.source if isinstance(token, Word) else token


def _is_operator(word: Word) -> bool:
    return word.source in _BINARY | _FILE_TESTS | _STRING_TESTS | {"!"}


class _Judge:
    def __init__(self, tokens: list[Word | str], place: Place) -> None:
        self.tokens = tokens
        self.place = place
        self.at = 0
        self.parts: list[str] = []
        self.compares_integers = False

    def _peek(self, offset: int = 0) -> Word | str | None:
        at = self.at + offset
        return self.tokens[at] if at < len(self.tokens) else None

    def _operator(self) -> None:
        self.parts.append(_text(self.tokens[self.at]))
        self.at += 1

    def disjunction(self) -> None:
        self.conjunction()
        while self._peek() == "||":
            self._operator()
            self.conjunction()

    def conjunction(self) -> None:
        self.negation()
        while self._peek() == "&&":
            self._operator()
            self.negation()

    def negation(self) -> None:
        token = self._peek()
        if isinstance(token, Word) and token.source == "!":
            self._operator()
            self.negation()
        elif token == "(":  # noqa: S105 (an operator, not a password)
            self._operator()
            self.disjunction()
            if self._peek() != ")":
                raise Denied("a `(` inside `[[ … ]]` is not closed")
            self._operator()
        else:
            self.primary()

    def primary(self) -> None:
        token = self._peek()
        if not isinstance(token, Word):
            raise Denied(f"`[[ … ]]` expects a word where `{shown(str(token))}` is")
        following = self._peek(1)
        if token.source in _REFUSED_TESTS:
            raise Denied(f"`[[ {token.source} … ]]` {_REFUSED_TESTS[token.source]}")
        if token.source in _FILE_TESTS | _STRING_TESTS and isinstance(following, Word):
            self._operator()
            self._operand(path=token.source in _FILE_TESTS)
            return
        self._operand(
            path=isinstance(self._peek(1), Word) and _text_of(self._peek(1)) in _FILE_COMPARISONS
        )
        operator = self._peek()
        if operator in ("<", ">") or (isinstance(operator, Word) and operator.source in _BINARY):
            name = _text(operator)
            self._operator()
            self.compares_integers = self.compares_integers or name in _INTEGER
            if name in _PATTERN or name == "=~":
                self._pattern()
            else:
                self._operand(path=name in _FILE_COMPARISONS)

    def _operand(self, *, path: bool) -> None:
        token = self._peek()
        if not isinstance(token, Word):
            raise Denied("an operator inside `[[ … ]]` has no operand")
        if path:
            check_path(self.place, token.text)
        self.parts.append(quote(token.text))
        self.at += 1

    def _pattern(self) -> None:
        token = self._peek()
        if not isinstance(token, Word):
            raise Denied("a pattern operator inside `[[ … ]]` has no pattern")
        self.parts.append(render_pattern(token))
        self.at += 1


def _text_of(token: Word | str | None) -> str:
    return "" if token is None else _text(token)


def render_pattern(word: Word) -> str:
    """``word`` with each character quoted as it was written, so bash matches the same
    pattern: quoted runs single-quoted, unquoted characters as themselves."""
    parts: list[str] = []
    run: list[str] = []
    for index, (char, quoted) in enumerate(zip(word.text, word.quoted, strict=True)):
        if not quoted and char in _ACTIVE:
            raise Denied(
                f"`{shown(char)}` from an unquoted expansion is special in a pattern; quote it"
            )
        if quoted or (char not in _RAW and char != "$"):
            run.append(char)
            continue
        if char == "$" and index != len(word.text) - 1:
            raise Denied("an unquoted `$` inside a pattern, other than at its end, is not read")
        if run:
            parts.append(quote("".join(run)))
            run = []
        parts.append(char)
    if run:
        parts.append(quote("".join(run)))
    rendered = "".join(parts)
    if rendered in ("]]", "!", ""):  # bash would read these as syntax; as patterns, literal
        return quote(word.text)
    return rendered
