"""Read an awk program (mawk 1.3.4, gawk 5.2) far enough to know what it can reach.

awk can run commands (``system()``, ``"cmd" | getline``, ``print | "cmd"``), write files
(``print > file``), read any file (``getline < file``), read the environment (``ENVIRON``,
gawk's ``PROCINFO``), open network connections (gawk's ``/inet`` files) and call functions
indirectly (gawk's ``@f()``). The tokenizer below tells regex literals from division the way
awk's grammar does, and each of those is refused from the tokens, not from a text search.
"""

from __future__ import annotations

import re
from typing import Final

_AWK_SYSTEM: Final = re.compile(r"\bsystem\b")
_ENVIRONMENT: Final = "reads the environment, which can hold secrets"
_AWK_REFUSED_NAMES: Final = {
    "system": "`awk` `system()` runs shell commands",
    "ENVIRON": f"`awk` `ENVIRON` {_ENVIRONMENT}",
    "PROCINFO": f"gawk `PROCINFO` {_ENVIRONMENT}",
    "SYMTAB": "gawk `SYMTAB` reaches any variable by name, `ENVIRON` included",
    "FUNCTAB": "gawk `FUNCTAB` reaches any function by name, `system` included",
}
_AWK_OPERATORS: Final = (
    "**=", "|&", "||", "&&", ">>", "<=", ">=", "==", "!=", "!~", "++", "--",
    "+=", "-=", "*=", "/=", "%=", "^=", "**",
)  # fmt: skip
_AWK_SINGLE: Final = frozenset("{}()[];,<>|!~?:=+-*/%^$")
_AWK_BEFORE_EXPRESSION: Final = frozenset(
    {"print", "printf", "return", "case", "do", "else", "exit", "in", "delete", "if", "while",
     "for", "function", "func", "next", "nextfile", "BEGIN", "END", "BEGINFILE", "ENDFILE"}
)  # fmt: skip
_AWK_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_NUMBER: Final = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)")


def program_problem(program: str) -> str | None:
    """Why an awk program could run commands or write files, or None when it only reads.

    The tokens decide: every pipe (``cmd | getline``, ``print | cmd``, ``|&``), ``system``,
    the environment arrays, ``getline < file``, and any ``>`` at the top level of a
    ``print`` or ``printf`` statement (where it is a redirection) are refused. Two text
    checks back them up, even inside strings: gawk's ``@`` (directives and indirect calls)
    and ``/inet`` network file names.
    """
    if _AWK_SYSTEM.search(program):
        return "`awk` `system()` runs shell commands"
    if "@" in program:
        return "gawk `@` directives and indirect calls can load code or call any function"
    if "/inet" in program:
        return "gawk `/inet` files open network connections"
    tokens = _awk_tokens(program)
    if isinstance(tokens, str):
        return tokens
    for index, (kind, text) in enumerate(tokens):
        if kind == "op" and text in ("|", "|&"):
            return '`awk` pipes (`"cmd" | getline`, `print | "cmd"`) run shell commands'
        if kind == "name" and text in _AWK_REFUSED_NAMES:
            return _AWK_REFUSED_NAMES[text]
        if kind == "name" and text == "getline" and _reads_file(tokens, index + 1):
            return "`awk` `getline < file` reads a file the filter cannot check"
    printing = False
    depth = 0
    for kind, text in tokens:
        if kind == "name" and text in ("print", "printf"):
            printing, depth = True, 0
        elif printing:
            if text in ("(", "["):
                depth += 1
            elif text in (")", "]"):
                depth -= 1
            elif text in (";", "\n", "{", "}") and depth <= 0:
                printing = False
            elif kind == "op" and text.startswith(">") and depth <= 0:
                return "`awk` `print > file` writes to a file"
    return None


def _reads_file(tokens: list[tuple[str, str]], start: int) -> bool:
    """Whether the ``getline`` before ``tokens[start]`` has a ``<`` redirection."""
    for kind, text in tokens[start:]:
        if kind == "op" and text == "<":
            return True
        if kind == "op" and text in (";", "\n", "{", "}", ")", "]", "&&", "||", ","):
            return False
    return False


def _awk_tokens(p: str) -> list[tuple[str, str]] | str:
    """Split an awk program into tokens, telling regex literals from division by the token
    before, as awk's grammar does. Where that is ambiguous, deny rather than guess."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(p)
    while i < n:
        c = p[i]
        if c in " \t":
            i += 1
        elif c == "\\" and p.startswith("\\\n", i):
            i += 2
        elif c == "\n":
            tokens.append(("op", "\n"))
            i += 1
        elif c == "#":
            end = p.find("\n", i)
            i = n if end < 0 else end
        elif c == '"':
            j = i + 1
            while j < n and p[j] != '"':
                if p[j] == "\n":
                    return "the awk program has an unterminated string"
                j += 2 if p[j] == "\\" else 1
            if j >= n:
                return "the awk program has an unterminated string"
            tokens.append(("str", p[i : j + 1]))
            i = j + 1
        elif c == "/" and not _awk_operand_before(tokens):
            if tokens and tokens[-1][1] in ("++", "--", "getline"):
                return "the awk program has a `/` that could be a regex or a division"
            j = i + 1
            in_bracket = False
            while j < n:
                ch = p[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == "\n":
                    return "the awk program has an unterminated regex"
                if in_bracket:
                    if ch == "/":
                        return "the awk program has a `/` inside a bracket expression"
                    if ch == "]":
                        in_bracket = False
                elif ch == "[":
                    in_bracket = True
                elif ch == "/":
                    break
                j += 1
            if j >= n:
                return "the awk program has an unterminated regex"
            tokens.append(("regex", p[i : j + 1]))
            i = j + 1
        elif c.isalpha() or c == "_":
            match = _AWK_IDENTIFIER.match(p, i)
            assert match is not None
            tokens.append(("name", match.group()))
            i = match.end()
        elif c.isdigit() or (c == "." and p[i + 1 : i + 2].isdigit()):
            match = _AWK_NUMBER.match(p, i)
            assert match is not None
            tokens.append(("number", match.group()))
            i = max(match.end(), i + 1)
        else:
            operator = next((op for op in _AWK_OPERATORS if p.startswith(op, i)), None)
            if operator is None:
                if c not in _AWK_SINGLE:
                    return f"the awk program has a character plan mode cannot read: {c!r}"
                operator = c
            tokens.append(("op", operator))
            i += len(operator)
    return tokens


def _awk_operand_before(tokens: list[tuple[str, str]]) -> bool:
    """Whether the last token ends an operand, so that a following ``/`` divides."""
    if not tokens:
        return False
    kind, text = tokens[-1]
    if kind in ("number", "str", "regex"):
        return True
    if kind == "name":
        return text not in _AWK_BEFORE_EXPRESSION and text != "getline"
    return text in (")", "]")
