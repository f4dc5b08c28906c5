"""Literal arithmetic, ``$(( 1 + 2 ))`` and ``(( 1 < 3 ))``, evaluated here as bash would.

Bash evaluates a name inside arithmetic as a variable, and a subscript of one
(``a[$(touch x)]``) as a word it expands, which runs commands; so only decimal literals and
operators are accepted, never a name, ``$``, a quote or a ``[``. The value is computed here,
in 64-bit two's complement with C's division as bash does, and becomes data: ``$((…))`` is
the number as a quoted word, ``((…))`` the command ``true`` or ``false`` (its exit status).
Bash never reads the arithmetic text. What bash reports as an error (division by zero, a
negative exponent, an octal or based literal, ``++``/``--``, assignment) is refused.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.verdict import Denied, shown

MAX_ARITHMETIC_CHARS: Final = 256
_ALLOWED: Final = frozenset("0123456789 \t+-*/%()<>=!&|^~?:,")
_TOKEN: Final = re.compile(r"\s*(\d+|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^!~?:(),])")
_BINARY: Final = {
    "||": 3, "&&": 4, "|": 5, "^": 6, "&": 7, "==": 8, "!=": 8,
    "<": 9, ">": 9, "<=": 9, ">=": 9, "<<": 10, ">>": 10,
    "+": 11, "-": 11, "*": 12, "/": 12, "%": 12, "**": 13,
}  # fmt: skip
_BITS: Final = 64


def _wrap(value: int) -> int:
    value &= (1 << _BITS) - 1
    return value - (1 << _BITS) if value >> (_BITS - 1) else value


def expansion(text: str, start: int) -> tuple[str, int]:
    """``$((…))`` at ``start``: its value as text and the index after ``))``."""
    body, end = _body(text, start + 3)
    return str(evaluate(body)), end


def command(text: str, start: int) -> tuple[bool, int]:
    """``((…))`` whose first ``(`` is at ``start``: whether bash's exit status is 0 (the value
    is not zero), and the index after ``))``."""
    body, end = _body(text, start + 2)
    return evaluate(body) != 0, end


def _body(text: str, start: int) -> tuple[str, int]:
    depth = 0
    i = start
    while i < len(text) and i - start <= MAX_ARITHMETIC_CHARS:
        c = text[i]
        if c == ")" and depth == 0:
            if not text.startswith("))", i):
                raise Denied("arithmetic `((…))` is not closed by `))`")
            return text[start:i], i + 2
        if c not in _ALLOWED:
            raise Denied(
                f"arithmetic with `{shown(c)}`: plan mode evaluates only literal numbers and "
                "operators (bash evaluates names and array subscripts, which can run commands)"
            )
        depth += {"(": 1, ")": -1}.get(c, 0)
        i += 1
    raise Denied(f"arithmetic `((…))` is not closed within {MAX_ARITHMETIC_CHARS} characters")


def evaluate(body: str) -> int:
    """The value bash gives the literal arithmetic ``body``; ``Denied`` where bash errs or
    where the text holds what plan mode does not evaluate."""
    if "++" in body or "--" in body:
        raise Denied("`++` and `--` in arithmetic change a variable")
    tokens: list[str] = []
    at = 0
    while body[at:].strip():
        match = _TOKEN.match(body, at)
        if match is None:
            raise Denied(f"arithmetic `{shown(body)}` has `=`: an assignment changes a variable")
        tokens.append(match.group(1))
        at = match.end()
    if not tokens:
        raise Denied("empty arithmetic `(( ))` is not evaluated")
    parser = _Parser(tokens)
    value = parser.comma()
    if parser.at < len(tokens):
        raise Denied(f"arithmetic `{shown(body)}` is not an expression bash reads")
    return value


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def _next(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, expected: str) -> None:
        if self._next() != expected:
            raise Denied(f"arithmetic expects `{expected}`")
        self.at += 1

    def comma(self) -> int:
        value = self.conditional()
        while self._next() == ",":
            self.at += 1
            value = self.conditional()
        return value

    def conditional(self) -> int:
        test = self.binary(3)
        if self._next() != "?":
            return test
        self.at += 1
        then = self.comma()
        self._take(":")
        otherwise = self.conditional()
        return then if test else otherwise

    def binary(self, level: int) -> int:
        left = self.unary()
        while True:
            op = self._next()
            precedence = _BINARY.get(op or "")
            if op is None or precedence is None or precedence < level:
                return left
            self.at += 1
            right = self.binary(precedence if op == "**" else precedence + 1)
            left = _apply(op, left, right)

    def unary(self) -> int:
        op = self._next()
        if op in ("-", "+", "!", "~"):
            self.at += 1
            value = self.unary()
            return _wrap({"-": -value, "+": value, "!": int(not value), "~": ~value}[op])
        if op == "(":
            self.at += 1
            value = self.comma()
            self._take(")")
            return value
        if op is None or not op.isdigit():
            raise Denied("arithmetic is missing a number")
        self.at += 1
        if len(op) > 1 and op.startswith("0"):
            raise Denied(f"`{shown(op)}` is octal in bash arithmetic; write it without the 0")
        return _wrap(int(op))


def _apply(op: str, left: int, right: int) -> int:
    if op in ("/", "%"):
        if right == 0:
            raise Denied("division by zero in arithmetic")
        if left == -(1 << (_BITS - 1)) and right == -1:
            raise Denied("arithmetic overflows")
        quotient = abs(left) // abs(right) * (1 if (left < 0) == (right < 0) else -1)
        return _wrap(quotient if op == "/" else left - quotient * right)
    if op == "**":
        if right < 0:
            raise Denied("a negative exponent in arithmetic")
        return _wrap(pow(left, right, 1 << _BITS))
    if op in ("<<", ">>"):
        if not 0 <= right < _BITS:
            raise Denied("a shift by more than 63 or less than 0 in arithmetic")
        return _wrap(left << right if op == "<<" else left >> right)
    results = {
        "+": left + right, "-": left - right, "*": left * right,
        "<": int(left < right), ">": int(left > right), "<=": int(left <= right),
        ">=": int(left >= right), "==": int(left == right), "!=": int(left != right),
        "&": left & right, "|": left | right, "^": left ^ right,
        "&&": int(bool(left) and bool(right)), "||": int(bool(left) or bool(right)),
    }  # fmt: skip
    return _wrap(results[op])
