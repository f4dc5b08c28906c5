"""Read an awk program (mawk 1.3.4, gawk 5.2) far enough to know what it can reach.

awk can run commands (``system()``, ``"cmd" | getline``, ``print | "cmd"``), write files
(``print > file``), read any file (``getline < file``), read the environment (``ENVIRON``,
gawk's ``PROCINFO``), open network connections (gawk's ``/inet`` files) and call functions
indirectly (gawk's ``@f()``), and make the program read other files by writing ``ARGV`` or
``ARGC``. Each of those is refused from the tokens, not from a text search.

Where a ``/`` starts a regex rather than a division is where the awks differ, and reading it
wrong hides code inside what looks like a regex (or the reverse). mawk's scanner decides from
the token before (a division follows a number, string, name, ``)``, ``]``, ``getline``,
``++`` or ``--``; a regex follows anything else, ``length`` included); gawk's parser decides
from its grammar (a regex wherever an expression may start: after the ``)`` of an ``if``,
``while`` or ``for`` condition too, and ``length`` is an operand). The program is read the
way each dialect reads it, and for plain ``awk`` (either, depending on the system) both
readings must be safe.
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
_CONDITION_KEYWORDS: Final = frozenset({"if", "while", "for"})
_ARGUMENT_WRITERS: Final = frozenset({"sub", "gsub"})
_ASSIGNMENTS: Final = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "^=", "**=", "++", "--"})
ARGV_WRITE: Final = "`awk` writing `ARGV` or `ARGC` makes it read files the filter cannot check"
DIALECTS: Final = ("gawk", "mawk")
"""The awk dialects the filter reads programs as; ``awk`` and ``nawk`` may be either."""
_AWK_IDENTIFIER: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_AWK_NUMBER: Final = re.compile(r"(?:0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)")


def program_problem(program: str, dialects: tuple[str, ...] = DIALECTS) -> str | None:
    """Why an awk program could run commands or write files, or None when it only reads,
    read as each of ``dialects`` reads it.

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
    problems = {}
    for dialect in dialects:
        tokens = _awk_tokens(program, dialect)
        problem = tokens if isinstance(tokens, str) else _token_problem(tokens)
        if problem is not None:
            problems[dialect] = problem
    if not problems:
        return None
    dialect, problem = next(iter(problems.items()))
    return problem if len(problems) == len(dialects) else f"{problem} (as {dialect} reads it)"


def _token_problem(tokens: list[tuple[str, str]]) -> str | None:
    for index, (kind, text) in enumerate(tokens):
        if kind == "op" and text in ("|", "|&"):
            return '`awk` pipes (`"cmd" | getline`, `print | "cmd"`) run shell commands'
        if kind == "name" and text in _AWK_REFUSED_NAMES:
            return _AWK_REFUSED_NAMES[text]
        if kind == "name" and text == "getline" and _reads_file(tokens, index + 1):
            return "`awk` `getline < file` reads a file the filter cannot check"
        if kind == "name" and text in ("ARGV", "ARGC") and _writes_argument(tokens, index):
            return ARGV_WRITE
    printing = False
    depth = 0
    for index, (kind, text) in enumerate(tokens):
        if kind == "name" and text in ("print", "printf"):
            printing, depth = True, 0
        elif printing:
            if text in ("(", "["):
                depth += 1
            elif text in (")", "]"):
                depth -= 1
            elif text in (";", "\n", "{", "}") and depth <= 0:
                printing = False
            elif (
                kind == "op"
                and text.startswith(">")
                and depth <= 0
                and not _to_standard_stream(tokens, index + 1)
            ):
                return "`awk` `print > file` writes to a file"
    return None


_STANDARD_STREAMS: Final = ('"/dev/stderr"', '"/dev/stdout"')


def _to_standard_stream(tokens: list[tuple[str, str]], start: int) -> bool:
    """Whether a ``>`` or ``>>`` is followed by exactly ``"/dev/stderr"`` or
    ``"/dev/stdout"`` and the statement's end (both awks print there without opening a
    file; any more text would make the name an expression)."""
    if start >= len(tokens) or tokens[start] not in (("str", s) for s in _STANDARD_STREAMS):
        return False
    following = tokens[start + 1][1] if start + 1 < len(tokens) else ";"
    return following in (";", "\n", "}")


def _reads_file(tokens: list[tuple[str, str]], start: int) -> bool:
    """Whether the ``getline`` before ``tokens[start]`` has a ``<`` redirection."""
    for kind, text in tokens[start:]:
        if kind == "op" and text == "<":
            return True
        if kind == "op" and text in (";", "\n", "{", "}", ")", "]", "&&", "||", ","):
            return False
    return False


def _writes_argument(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the ``ARGV`` or ``ARGC`` at ``tokens[index]`` may be written: assigned,
    incremented, deleted, read into by ``getline``, the target of ``sub``/``gsub`` or a
    ``for (… in …)`` variable, or (``ARGV`` alone) handed to a function as an array."""
    before = tokens[index - 1][1] if index else ""
    end = index + 1
    if tokens[index][1] == "ARGV":
        if end >= len(tokens) or tokens[end][1] != "[":
            return before != "in"  # `k in ARGV` only tests membership
        depth = 0
        for end in range(index + 1, len(tokens)):
            depth += {"[": 1, "]": -1}.get(tokens[end][1], 0)
            if depth == 0:
                break
        end += 1
    after = tokens[end][1] if end < len(tokens) else ""
    if before in ("++", "--", "getline", "delete") or after in _ASSIGNMENTS:
        return True
    if before == "(" and index >= 2 and tokens[index - 2][1] == "for":
        return True
    return _inside_call(tokens, index, _ARGUMENT_WRITERS)


def _inside_call(tokens: list[tuple[str, str]], index: int, functions: frozenset[str]) -> bool:
    depth = 0
    for position in range(index - 1, -1, -1):
        text = tokens[position][1]
        if text in (")", "]"):
            depth += 1
        elif text in ("(", "["):
            if depth == 0:
                if text == "(" and position and tokens[position - 1][1] in functions:
                    return True
            else:
                depth -= 1
        elif text in ("{", "}", ";", "\n") and depth == 0:
            return False
    return False


def _awk_tokens(p: str, dialect: str) -> list[tuple[str, str]] | str:
    """Split an awk program into tokens, telling regex literals from division as ``dialect``
    does. Where that is ambiguous, deny rather than guess."""
    tokens: list[tuple[str, str]] = []
    conditions: list[bool] = []  # for each open `(`: does it open an if/while/for condition?
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
        elif c == "/" and _starts_regex(tokens, dialect):
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
            kind = "op"
            if operator == "(":
                conditions.append(bool(tokens) and tokens[-1][1] in _CONDITION_KEYWORDS)
            elif operator == ")" and conditions and conditions.pop():
                kind = "condition-end"
            tokens.append((kind, operator))
            i += len(operator)
    return tokens


def _starts_regex(tokens: list[tuple[str, str]], dialect: str) -> bool:
    """Whether ``dialect`` reads a ``/`` after ``tokens`` as the start of a regex."""
    if not tokens:
        return True
    kind, text = tokens[-1]
    if kind in ("number", "str", "regex"):
        return False
    if kind == "condition-end":
        return dialect == "gawk"  # gawk's grammar wants a statement; mawk sees `)`
    if kind == "name":
        if text == "length":
            return dialect == "mawk"  # a builtin token to mawk, an operand to gawk
        return text in _AWK_BEFORE_EXPRESSION
    return text not in (")", "]", "++", "--")
