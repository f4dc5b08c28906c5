"""Decide whether a shell command only reads, so that plan mode can let an agent run it.

In plan mode an agent explores a workspace before anyone has approved its plan, and the
shell is the one tool that could break that promise. This classifier is the first of two
guards (the Landlock sandbox in ``sandbox.py`` is the second, so a mistake here still
cannot write): it allows only commands it understands completely and knows to be
read-only, denies everything else, and says why in a sentence a user can read.

How a command is judged:

* Guards on the raw text run first, in linear time: limits on size, lines, nesting and
  substitutions (which also bound how long bashlex can take), no control characters, and
  an outright denial of what bashlex does not model faithfully: ``$'…'`` and ``$"…"``
  quoting, arithmetic (``((…))``, ``$((…))``, ``$[…]``), ``${…}`` beyond a plain name,
  here-documents, and line breaks inside ``$(…)`` (bashlex silently drops what follows).
* bashlex parses the rest. Every tree (one per line) is walked, and a node kind the walker
  does not know denies. Command and process substitutions are checked like the top level,
  once the walker has made sure bashlex read each of them to its closing bracket.
  Redirections may only point at ``/dev/null`` or duplicate a descriptor. Assignments and
  environment prefixes deny, and so does ``&``.
* Each simple command must be on the allow-list and pass its own rule for flags, operands
  and sub-commands: ``git log`` but not ``git -c … log``, ``find -name`` but not
  ``find -exec``, ``sed -n 1p`` but not ``sed -i`` or a ``w`` command.
* Commands with flags that write or run programs (``sed``, ``awk``, ``find``, ``git``,
  ``sort``, ``uniq``, ``rg``, ``jq``, ``tree``, ``date``, ``file``, ``xxd``…) take only
  arguments whose value the shell cannot turn into a flag: a word holding a variable, a
  command substitution, a glob or a brace expansion is refused unless it begins with a
  literal character other than ``-`` (``src/*.py``, ``"./$f"``) or follows ``--``. A file
  in the workspace named ``-i`` would otherwise turn ``sed -n p *`` into ``sed -i``.
  Commands without such flags (``cat``, ``ls``, ``head``, ``grep``…) take any argument.
* A command made only of plain words, quotes, pipes, ``&&``, ``||``, ``;`` and
  ``/dev/null`` redirections skips bashlex: splitting it into words needs no shell
  grammar, and a regular expression does it in a small fraction of bashlex's time (a
  bashlex parse costs up to half of a process spawn). Tests check that both paths agree.

Paths are not confined here: reading outside the workspace is allowed, and the sandbox and
the file tools decide what is visible.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import bashlex

__all__ = [
    "MAX_COMMAND_BYTES",
    "MAX_LINES",
    "MAX_NESTING",
    "MAX_PARSED_WORDS",
    "MAX_SUBSHELLS",
    "Verdict",
    "classify",
    "classify_uncached",
]

MAX_COMMAND_BYTES: Final = 8192
"""Longer commands are denied before parsing."""

MAX_NESTING: Final = 16
"""Deeper nesting of quotes, substitutions, subshells and braces is denied before parsing."""

MAX_SUBSHELLS: Final = 32
"""More command substitutions, process substitutions and subshells are denied before parsing:
bashlex parses each again from scratch, and this bounds the time one command can cost."""

MAX_LINES: Final = 64
"""Commands of more lines are denied before parsing; bashlex parses each line separately."""

MAX_PARSED_WORDS: Final = 256
"""Commands that need the full parser may hold this many words; bashlex spends tens of
microseconds on each, and this keeps the worst case near 20 ms."""

_MAX_WALK_DEPTH: Final = 4 * MAX_NESTING


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether plan mode may run a command, and a sentence a user can read saying why."""

    allowed: bool
    reason: str


def classify(command: str) -> Verdict:
    """Classify ``command``, answering repeats from a cache. Never raises."""
    if type(command) is str and len(command) <= MAX_COMMAND_BYTES:
        return _classify_cached(command)
    return classify_uncached(command)


@functools.lru_cache(maxsize=2048)
def _classify_cached(command: str) -> Verdict:
    return classify_uncached(command)


def classify_uncached(command: str) -> Verdict:
    """Classify ``command`` without the cache. Never raises: an internal failure denies."""
    try:
        return _classify(command, fast_path=True)
    except Exception as exc:
        return _deny(f"the command could not be checked ({type(exc).__name__}), so it is denied")


def _classify(command: object, *, fast_path: bool) -> Verdict:
    if not isinstance(command, str):
        return _deny("the command is not text")
    problem = _guard_text(command)
    if problem is not None:
        return _deny(problem)
    names: list[str] = []
    plain = _split_plain(command) if fast_path else None
    if plain is not None:
        for words in plain:
            problem = _check_command(words, names)
            if problem is not None:
                return _deny(problem)
    else:
        problem = _check_parsed(command, names)
        if problem is not None:
            return _deny(problem)
    if not names:
        return _deny("the command runs nothing plan mode can check")
    return Verdict(True, "read-only: " + ", ".join(dict.fromkeys(names)))


def _deny(reason: str) -> Verdict:
    return Verdict(False, reason)


def _quote(text: str, limit: int = 40) -> str:
    """``text`` shortened for a reason sentence."""
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------------------
# Guards on the raw text
# --------------------------------------------------------------------------------------

_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_PLAIN_BRACED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-]")
_WORD_BREAK: Final = frozenset(" \t\n;&|()<>")

_ARITHMETIC: Final = (
    "shell arithmetic (`((…))`, `$((…))`, `$[…]`) is not allowed: "
    "array subscripts inside it can run commands"
)
_HEREDOC: Final = "here-documents and here-strings (`<<`, `<<<`) are not allowed"
_ANSI_C: Final = (
    "`$'…'` quoting is not allowed: the shell decodes escapes in it that the checker cannot see"
)
_LOCALE: Final = '`$"…"` locale quoting is not allowed'
_BRACED: Final = (
    "`${…}` is only allowed as a plain `${NAME}`; other forms (`${x:-$(cmd)}`, `${x@P}`, "
    "`${a[…]}`) can run code"
)
_UNTERMINATED: Final = "the command has an unterminated quote"
_UNCLOSED_IN_QUOTES: Final = (
    "a `${` without a closing `}` inside single quotes is not allowed: the parser loops "
    "forever on it"
)


def _guard_text(command: str) -> str | None:
    """Cheap checks that run before any parsing; linear in the length of ``command``."""
    if len(command) > MAX_COMMAND_BYTES:
        return f"the command is longer than {MAX_COMMAND_BYTES} bytes"
    try:
        size = len(command.encode("utf-8"))
    except UnicodeEncodeError:
        return "the command is not valid UTF-8 text"
    if size > MAX_COMMAND_BYTES:
        return f"the command is longer than {MAX_COMMAND_BYTES} bytes"
    if not command.strip():
        return "empty command"
    if _CONTROL.search(command):
        return "control characters (other than tab and newline) are not allowed"
    if command.count("\n") >= MAX_LINES:
        return f"the command has more than {MAX_LINES} lines"
    return _scan_structure(command)


_SUBSTITUTIONS: Final = frozenset({"$(", "<(", "`"})
_PARENTHESES: Final = frozenset({"$(", "<(", "("})
_NEWLINE_IN_SUBSTITUTION: Final = (
    "line breaks inside `$(…)`, `<(…)` or backquotes are not allowed (the parser would "
    "drop what follows them); separate the commands with `;`"
)


class _Nesting:
    """The open quotes, substitutions and brackets of a command being scanned."""

    __slots__ = ("opened", "stack")

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.opened = 0

    @property
    def top(self) -> str:
        return self.stack[-1] if self.stack else ""

    @property
    def in_substitution(self) -> bool:
        return any(kind in _SUBSTITUTIONS for kind in self.stack)

    def push(self, kind: str) -> str | None:
        self.stack.append(kind)
        if kind in _PARENTHESES or kind == "`":
            self.opened += 1
            if self.opened > MAX_SUBSHELLS:
                return (
                    f"the command has more than {MAX_SUBSHELLS} substitutions and subshells, "
                    "more than plan mode checks"
                )
        if len(self.stack) > MAX_NESTING:
            return (
                f"the command nests quotes, substitutions or brackets more than {MAX_NESTING} deep"
            )
        return None

    def close(self, kinds: frozenset[str]) -> None:
        if self.stack and self.stack[-1] in kinds:
            self.stack.pop()


def _scan_structure(s: str) -> str | None:
    """Track quoting and nesting the way bash does and deny the constructs bashlex misreads.

    One entry is pushed per open double quote, backquote, ``$(``, ``(`` or ``{``; the
    stack's height is the nesting depth. Single quotes are skipped whole, and comments are
    skipped only where bash starts one (at the beginning of a word).
    """
    nesting = _Nesting()
    n = len(s)
    i = 0
    word_start = True
    while i < n:
        c = s[i]
        top = nesting.top
        problem: str | None = None
        if top == '"':
            if c == "\\":
                i += 2
                continue
            if c == '"':
                nesting.close(frozenset('"'))
            elif c == "`":
                problem = nesting.push("`")
            elif c == "$":
                step = _scan_dollar(s, i, nesting, in_double_quotes=True)
                if isinstance(step, str):
                    return step
                i = step
                continue
            if problem is not None:
                return problem
            i += 1
            word_start = False
            continue
        if c == "\\":
            i += 2
            word_start = False
            continue
        if c == "'":
            end = s.find("'", i + 1)
            if end < 0:
                return _UNTERMINATED
            if s.rfind("${", i, end) > s.rfind("}", i, end):
                return _UNCLOSED_IN_QUOTES
            i = end + 1
            word_start = False
            continue
        if c == "#" and word_start:
            end = s.find("\n", i)
            if end < 0:
                break
            i = end
            continue
        if c == "$":
            step = _scan_dollar(s, i, nesting, in_double_quotes=False)
            if isinstance(step, str):
                return step
            i = step
            word_start = False
            continue
        if c == '"':
            problem = nesting.push('"')
        elif c == "`":
            if top == "`":
                nesting.close(frozenset("`"))
            else:
                problem = nesting.push("`")
        elif c == "\n" and nesting.in_substitution:
            return _NEWLINE_IN_SUBSTITUTION
        elif c == "<" and s.startswith("<<", i):
            return _HEREDOC
        elif c == "(":
            if s.startswith("((", i):
                return _ARITHMETIC
            problem = nesting.push("<(" if i > 0 and s[i - 1] in "<>" else "(")
        elif c == ")":
            nesting.close(_PARENTHESES)
        elif c == "{":
            problem = nesting.push("{")
        elif c == "}":
            nesting.close(frozenset("{"))
        if problem is not None:
            return problem
        word_start = c in _WORD_BREAK
        i += 1
    if nesting.top in ('"', "`"):
        return _UNTERMINATED
    return None


def _scan_dollar(s: str, i: int, nesting: _Nesting, *, in_double_quotes: bool) -> int | str:
    """Judge the ``$`` at ``s[i]``; return the index to resume at, or why to deny."""
    following = s[i + 1 : i + 2]
    if following == "(":
        if s.startswith("((", i + 1):
            return _ARITHMETIC
        return nesting.push("$(") or i + 2
    if following == "[":
        return _ARITHMETIC
    if following == "{":
        end = s.find("}", i + 2)
        if end < 0 or not _PLAIN_BRACED.fullmatch(s, i + 2, end):
            return _BRACED
        return end + 1
    if not in_double_quotes:
        if following == "'":
            return _ANSI_C
        if following == '"':
            return _LOCALE
    return i + 1


# --------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Word:
    """One shell word: its text after quote removal, and what the shell may do to it.

    ``exact``: the program receives ``text`` unchanged (no expansion, glob or brace
    expansion). ``single``: it stays one argument (nothing unquoted splits it).
    ``lead_safe``: every argument it becomes starts with a known character other than
    ``-``, so it can never be read as a flag. ``why`` names what made it inexact.
    """

    text: str
    source: str
    exact: bool
    single: bool
    lead_safe: bool
    why: str = ""


_NAME_CHARS: Final = string.ascii_letters + string.digits + "_"
_EXPANSION_AFTER_DOLLAR: Final = frozenset(_NAME_CHARS + "{([@*#?$!-'\"")
_EXPANSION_AFTER_DOLLAR_IN_QUOTES: Final = frozenset(_NAME_CHARS + "{([@*#?$!-")
_DQ_ESCAPABLE: Final = frozenset('$`"\\\n')
_UNQUOTED_RUN: Final = re.compile(r"[^'\"\\`$*?\[~{},.<>]+")
_QUOTED_RUN: Final = re.compile(r"[^\"\\`$,.]+")
_TILDE: Final = "a `~` home-directory expansion"
_HIDDEN_EXPANSION: Final = "the word `{}` holds an expansion the parser did not report"


def _scan_word(source: str, spans: Mapping[int, tuple[int, str]]) -> _Word | str:
    """Describe the word written as ``source``; ``spans`` maps the offset of each expansion
    bashlex found to its end and kind. An expansion it did not report denies."""
    out: list[str] = []
    exact = single = True
    lead: bool | None = None
    why = ""
    in_quotes = False
    brace_depth = 0
    brace_at_start = brace = False
    last_bracket = source.rfind("]")
    n = len(source)
    i = 0

    def emit(chunk: str) -> None:
        nonlocal lead
        if chunk:
            out.append(chunk)
            if lead is None:
                lead = chunk[0] != "-"

    while i < n:
        span = spans.get(i)
        if span is not None:
            end, kind = span
            exact = False
            if kind in ("tilde", "processsubstitution"):
                why = why or (_TILDE if kind == "tilde" else "a process substitution")
                lead = True if lead is None else lead
            else:
                why = why or (
                    "a command substitution" if kind == "commandsubstitution" else "a variable"
                )
                lead = False if lead is None else lead
                single = single and in_quotes
            i = max(end, i + 1)
            continue
        run = (_QUOTED_RUN if in_quotes else _UNQUOTED_RUN).match(source, i)
        if run is not None:
            emit(run.group())
            i = run.end()
            continue
        c = source[i]
        if in_quotes:
            if c == '"':
                in_quotes = False
                i += 1
            elif c == "\\" and i + 1 < n and source[i + 1] in _DQ_ESCAPABLE:
                emit("" if source[i + 1] == "\n" else source[i + 1])
                i += 2
            elif c == "`" or (
                c == "$" and i + 1 < n and source[i + 1] in _EXPANSION_AFTER_DOLLAR_IN_QUOTES
            ):
                return _HIDDEN_EXPANSION.format(_quote(source))
            else:
                if brace_depth and (c == "," or source.startswith("..", i)):
                    brace = True
                emit(c)
                i += 1
            continue
        if c == "'":
            end = source.find("'", i + 1)
            if end < 0:
                return _UNTERMINATED
            chunk = source[i + 1 : end]
            if brace_depth and ("," in chunk or ".." in chunk):
                brace = True
            emit(chunk)
            i = end + 1
            continue
        if c == '"':
            in_quotes = True
            i += 1
            continue
        if c == "\\":
            emit("" if source[i + 1 : i + 2] == "\n" else source[i + 1 : i + 2] or "\\")
            i += 2
            continue
        if c == "`" or (c == "$" and i + 1 < n and source[i + 1] in _EXPANSION_AFTER_DOLLAR):
            return _HIDDEN_EXPANSION.format(_quote(source))
        if c in "*?" or (c == "[" and last_bracket > i):
            exact = single = False
            why = why or "a glob"
            lead = False if lead is None else lead
        elif c == "~" and (i == 0 or source[i - 1] in "=:"):
            exact = False
            why = why or _TILDE
            lead = True if lead is None else lead
        elif c == "{":
            if brace_depth == 0 and lead is None:
                brace_at_start = True
            brace_depth += 1
        elif c == "}":
            brace_depth = max(0, brace_depth - 1)
        elif brace_depth and (c == "," or source.startswith("..", i)):
            brace = True
        emit(c)
        i += 1
    if in_quotes:
        return _UNTERMINATED
    if brace:
        exact = single = False
        why = why or "a brace expansion"
        if brace_at_start:
            lead = False
    return _Word("".join(out), source, exact, single, bool(lead), why)


def _inexact(command: str, word: _Word) -> str:
    return (
        f"`{command}` only takes plain arguments here: `{_quote(word.source)}` holds "
        f"{word.why}, which the shell could turn into a flag or extra file names"
    )


# --------------------------------------------------------------------------------------
# The fast path: plain commands split without bashlex
# --------------------------------------------------------------------------------------

_PLAIN_TOKEN: Final = re.compile(
    r"""
      (?P<blank>[ \t]+)
    | (?P<op>\|\||&&|\|&|[|;])
    | (?P<redirect>(?:[0-9]?>>?|&>>?)/dev/null|[0-9]?>&[0-9])(?![^ \t|;&])
    | (?P<word>(?:[A-Za-z0-9_./:=,@%+^~*?\[\]-]|'[^'\n]*'|"[^"$`\\!\n]*")+)
    """,
    re.VERBOSE,
)


def _split_plain(command: str) -> list[list[_Word]] | None:
    """Split a command of plain words, quotes, pipes, ``&&``, ``||``, ``;`` and ``/dev/null``
    redirections into its simple commands, or return None for anything else."""
    commands: list[list[_Word]] = []
    current: list[_Word] = []
    last_op = ""
    position, n = 0, len(command)
    while position < n:
        match = _PLAIN_TOKEN.match(command, position)
        if match is None:
            return None
        position = match.end()
        kind = match.lastgroup
        if kind == "blank":
            continue
        if kind == "op":
            if not current:
                return None
            commands.append(current)
            current = []
            last_op = match.group()
            continue
        if kind == "redirect":
            if not current:
                return None
            continue
        word = _scan_word(match.group(), {})
        if isinstance(word, str):
            return None
        if not current and (word.source != word.text or word.text not in _RULES):
            return None
        current.append(word)
    if current:
        commands.append(current)
    elif last_op != ";" or not commands:
        return None
    return commands


# --------------------------------------------------------------------------------------
# The bashlex path
# --------------------------------------------------------------------------------------


def _check_parsed(command: str, names: list[str]) -> str | None:
    if len(command.split()) > MAX_PARSED_WORDS:
        return (
            f"the command has more than {MAX_PARSED_WORDS} words and needs the full parser; "
            "split it into smaller commands"
        )
    try:
        trees: Any = bashlex.parse(command)
    except RecursionError:
        return "the command is nested too deeply to check"
    except NotImplementedError as exc:
        return f"the command uses shell syntax plan mode does not support ({_quote(str(exc), 60)})"
    except Exception as exc:
        return f"the command could not be parsed ({_quote(str(exc), 60)})"
    if not trees:
        return "empty command"
    walker = _Walker(command, names)
    for tree in trees:
        problem = walker.node(tree, 0)
        if problem is not None:
            return problem
    return None


_ASSIGNMENT: Final = (
    "setting variables (`NAME=…`) is not allowed: prefixes such as `PATH=`, `LD_PRELOAD=` "
    "or `GIT_DIR=` change what commands do"
)
_LIST_OPERATORS: Final = frozenset({";", "&&", "||", "\n"})
_OUTPUT_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})


class _Walker:
    """Walks bashlex trees; every node kind it does not know denies."""

    def __init__(self, source: str, names: list[str]) -> None:
        self._source = source
        self._names = names

    def node(self, node: Any, depth: int) -> str | None:
        if depth > _MAX_WALK_DEPTH:
            return "the command is nested too deeply to check"
        kind = getattr(node, "kind", None)
        if kind == "command":
            return self._command(node, depth)
        if kind == "list":
            return self._list(node, depth)
        if kind == "pipeline":
            return self._pipeline(node, depth)
        if kind == "compound":
            return self._compound(node, depth)
        if kind in ("if", "while", "until"):
            return self._children(node.parts, depth)
        if kind == "for":
            return self._for(node, depth)
        if kind == "function":
            return "defining shell functions is not allowed"
        return f"the shell construct `{kind}` is not allowed in plan mode"

    def _children(self, parts: Any, depth: int) -> str | None:
        for part in parts:
            if getattr(part, "kind", None) == "reservedword":
                continue
            problem = self.node(part, depth + 1)
            if problem is not None:
                return problem
        return None

    def _list(self, node: Any, depth: int) -> str | None:
        for part in node.parts:
            if getattr(part, "kind", None) == "operator":
                if part.op == "&":
                    return "running commands in the background (`&`) is not allowed"
                if part.op not in _LIST_OPERATORS:
                    return f"the operator `{part.op}` is not allowed"
                continue
            problem = self.node(part, depth + 1)
            if problem is not None:
                return problem
        return None

    def _pipeline(self, node: Any, depth: int) -> str | None:
        for part in node.parts:
            kind = getattr(part, "kind", None)
            if kind == "pipe":
                if part.pipe not in ("|", "|&"):
                    return f"the pipe `{part.pipe}` is not allowed"
                continue
            if kind == "reservedword":
                if part.word != "!":
                    return f"`{part.word}` is not allowed in a pipeline"
                continue
            problem = self.node(part, depth + 1)
            if problem is not None:
                return problem
        return None

    def _compound(self, node: Any, depth: int) -> str | None:
        for part in node.list:
            if getattr(part, "kind", None) == "reservedword":
                if part.word not in ("{", "}", "(", ")"):
                    return f"`{part.word}` is not allowed here"
                continue
            problem = self.node(part, depth + 1)
            if problem is not None:
                return problem
        for redirect in getattr(node, "redirects", None) or ():
            problem = self._redirect(redirect, depth)
            if problem is not None:
                return problem
        return None

    def _for(self, node: Any, depth: int) -> str | None:
        seen_variable = False
        for part in node.parts:
            kind = getattr(part, "kind", None)
            if kind == "reservedword":
                continue
            if kind == "word":
                word = self._word(part, depth)
                if isinstance(word, str):
                    return word
                if not seen_variable:
                    seen_variable = True
                    if not (word.exact and re.fullmatch(r"[a-z_][a-z0-9_]*", word.text)):
                        return (
                            f"the loop variable `{_quote(word.source)}` must be a lower-case "
                            "name; upper-case names such as `PATH` or `IFS` change how "
                            "commands run"
                        )
                continue
            problem = self.node(part, depth + 1)
            if problem is not None:
                return problem
        return None

    def _command(self, node: Any, depth: int) -> str | None:
        words: list[_Word] = []
        for part in node.parts:
            kind = getattr(part, "kind", None)
            if kind == "assignment":
                return _ASSIGNMENT
            if kind == "redirect":
                problem = self._redirect(part, depth)
                if problem is not None:
                    return problem
            elif kind == "word":
                word = self._word(part, depth)
                if isinstance(word, str):
                    return word
                words.append(word)
            else:
                return f"the shell construct `{kind}` is not allowed in a command"
        if not words:
            return "a redirection without a command is not allowed"
        return _check_command(words, self._names)

    def _redirect(self, node: Any, depth: int) -> str | None:
        kind = getattr(node, "type", None)
        target = getattr(node, "output", None)
        if kind in ("<<", "<<-", "<<<"):
            return _HEREDOC
        if kind == "<>":
            return "`<>` opens a file for writing"
        if kind in (">&", "<&") and (isinstance(target, int) or target in (None, "-")):
            return None
        if getattr(target, "kind", None) != "word":
            return f"the redirection `{kind}` is not allowed"
        word = self._word(target, depth)
        if isinstance(word, str):
            return word
        if kind in _OUTPUT_REDIRECTS:
            if word.exact and word.text == "/dev/null":
                return None
            return (
                f"`{kind} {_quote(word.source)}` writes to a file; plan mode only lets "
                "output go to /dev/null"
            )
        if kind == "<":
            if "/dev/tcp" in word.text or "/dev/udp" in word.text:
                return "`/dev/tcp` and `/dev/udp` redirections open network connections"
            return None
        return f"the redirection `{kind}` is not allowed"

    def _word(self, node: Any, depth: int) -> _Word | str:
        problem = self._expansions(node, depth)
        if problem is not None:
            return problem
        start, end = node.pos
        spans: dict[int, tuple[int, str]] = {}
        for part in getattr(node, "parts", None) or ():
            part_start, part_end = part.pos
            if not start <= part_start < part_end <= end:
                return "the parser reported an expansion outside its word"
            spans[part_start - start] = (part_end - start, str(part.kind))
        return _scan_word(self._source[start:end], spans)

    def _substitution(self, node: Any, depth: int) -> str | None:
        """Check a ``$(…)``, ``<(…)`` or backquoted command, after making sure bashlex saw
        all of it: its inner command must run to the closing bracket or backquote."""
        command = getattr(node, "command", None)
        if command is None:
            return "the parser returned a substitution without a command"
        start, end = node.pos
        inner_start, inner_end = command.pos
        written = self._source[start:end]
        if written.startswith(">("):
            return "`>(…)` sends output to another command, which is not allowed"
        if written.startswith("`"):
            if "\\" in written:
                return "backquoted substitutions with backslashes are not allowed; use `$(…)`"
            closing, opening = "`", "`"
        else:
            closing, opening = ")", written[:2]
        complete = (
            opening in ("`", "$(", "<(")
            and len(written) > len(opening)
            and written.endswith(closing)
            and start + len(opening) <= inner_start <= inner_end <= end - 1
            and not self._source[inner_end : end - 1].strip(" \t;")
        )
        if not complete:
            return f"the parser did not read all of `{_quote(written)}`, so it is denied"
        return self.node(command, depth + 1)

    def _expansions(self, node: Any, depth: int) -> str | None:
        for part in getattr(node, "parts", None) or ():
            kind = getattr(part, "kind", None)
            if kind in ("commandsubstitution", "processsubstitution"):
                problem = self._substitution(part, depth)
            elif kind in ("parameter", "tilde"):
                problem = self._expansions(part, depth + 1)
            else:
                problem = f"the expansion `{kind}` is not allowed"
            if problem is not None:
                return problem
        return None


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------

_Rule = Callable[[str, Sequence[_Word]], str | None]
_COMMAND_NAME: Final = re.compile(r"\[|[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def _check_command(words: Sequence[_Word], names: list[str]) -> str | None:
    head, args = words[0], words[1:]
    name = head.text
    if not head.exact:
        return (
            f"the command name `{_quote(head.source)}` comes from {head.why}, so plan mode "
            "cannot tell what would run"
        )
    if head.source != name:
        return (
            f"command names must be written plainly; `{_quote(head.source)}` is quoted or "
            "escaped, which hides what runs"
        )
    denied = _DENIED_COMMANDS.get(name)
    if denied is not None:
        return denied
    if "/" in name:
        return f"commands must be named without a path; `{_quote(name)}` could be any program"
    rule = _RULES.get(name) if _COMMAND_NAME.fullmatch(name) else None
    if rule is None:
        return f"`{_quote(name)}` is not on the read-only allow-list"
    names.append(name)
    return rule(name, args)


def _any_arguments(name: str, args: Sequence[_Word]) -> str | None:
    """For commands that have no flag that writes, runs a program or opens the network."""
    return None


# --- option parsing -------------------------------------------------------------------


def _longs(names: str) -> frozenset[str]:
    return frozenset("--" + name for name in names.split())


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True, slots=True)
class _Options:
    """The flags one command accepts, for a getopt-like parser that fails closed.

    Letters in ``short`` take no value, letters in ``short_value`` take the rest of their
    cluster or the next word, letters in ``short_optional`` take only an attached value.
    Long names need the leading ``--``. ``long_last`` names take the next word when there
    is one (git's ``--contains [COMMIT]``); ``long_pair`` names take two words (jq's
    ``--arg NAME VALUE``). ``denied`` maps flags to the reason they are refused; with
    ``abbreviations``, a prefix of a denied long flag is refused too. With ``attached``
    false a value-taking letter must end its cluster and takes the next word.
    """

    short: str = ""
    short_value: str = ""
    short_optional: str = ""
    long: frozenset[str] = frozenset()
    long_value: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    long_last: frozenset[str] = frozenset()
    long_pair: frozenset[str] = frozenset()
    denied: Mapping[str, str] = field(default_factory=dict)
    numeric: bool = False
    attached: bool = True
    abbreviations: bool = True
    negatable: bool = False


@dataclass(frozen=True, slots=True)
class _Parsed:
    options: tuple[tuple[str, str | None], ...]
    operands: tuple[_Word, ...]

    def has(self, *flags: str) -> bool:
        return any(option in flags for option, _ in self.options)

    def values(self, *flags: str) -> list[str]:
        return [value for option, value in self.options if option in flags and value is not None]


_NUMERIC_FLAG: Final = re.compile(r"-[0-9]+")


def _unknown(command: str, flag: str) -> str:
    return f"`{command} {_quote(flag)}` is not an option plan mode knows to be read-only"


def _resolve_long(command: str, name: str, spec: _Options) -> tuple[str, str] | str:
    """Return the canonical flag and its kind, or why it is refused."""
    if name in spec.denied:
        return spec.denied[name]
    kinds = (
        ("flag", spec.long),
        ("value", spec.long_value),
        ("optional", spec.long_optional),
        ("last", spec.long_last),
        ("pair", spec.long_pair),
    )
    for kind, names in kinds:
        if name in names:
            return name, kind
    if spec.negatable and name.startswith("--no-"):
        positive = "--" + name[5:]
        if any(positive in names for _, names in kinds):
            return name, "flag"
    for denied in spec.denied:
        if denied.startswith(name) and denied.startswith("--"):
            return spec.denied[denied]
    if spec.abbreviations:
        candidates = [
            (full, kind) for kind, names in kinds for full in names if full.startswith(name)
        ]
        if len(candidates) == 1:
            return candidates[0]
    return _unknown(command, name)


def _take_value(command: str, flag: str, args: Sequence[_Word], index: int) -> str | _Word:
    if index >= len(args):
        return f"`{command} {flag}` needs a value"
    value = args[index]
    if not value.exact:
        return _inexact(command, value)
    return value


def _parse_options(command: str, args: Sequence[_Word], spec: _Options) -> _Parsed | str:
    """Split ``args`` into flags and operands as GNU getopt does (flags may follow operands
    until ``--``), refusing unknown and denied flags and words that could become flags."""
    options: list[tuple[str, str | None]] = []
    operands: list[_Word] = []
    after_dashes = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if after_dashes:
            operands.append(word)
            continue
        if not word.exact:
            if word.lead_safe:
                operands.append(word)
                continue
            return _inexact(command, word)
        text = word.text
        if text == "--":
            after_dashes = True
            continue
        if not text.startswith("-") or text == "-":
            operands.append(word)
            continue
        if text.startswith("--"):
            name, has_value, attached = text.partition("=")
            resolved = _resolve_long(command, name, spec)
            if isinstance(resolved, str):
                return resolved
            flag, kind = resolved
            value: str | None = attached if has_value else None
            if kind == "flag" and has_value:
                return f"`{command} {flag}` takes no value"
            if kind in ("value", "pair") and not has_value:
                taken = _take_value(command, flag, args, i)
                if isinstance(taken, str):
                    return taken
                value = taken.text
                i += 1
            if kind == "pair":
                taken = _take_value(command, flag, args, i)
                if isinstance(taken, str):
                    return taken
                i += 1
            if kind == "last" and not has_value and i < len(args):
                taken = _take_value(command, flag, args, i)
                if isinstance(taken, str):
                    return taken
                value = taken.text
                i += 1
            options.append((flag, value))
            continue
        if spec.numeric and _NUMERIC_FLAG.fullmatch(text):
            options.append(("-NUM", text[1:]))
            continue
        letters = text[1:]
        checked = letters
        if spec.attached:
            stops = [
                letters.index(ch) for ch in spec.short_value + spec.short_optional if ch in letters
            ]
            checked = letters[: min(stops) + 1] if stops else letters
        for letter in checked:
            if "-" + letter in spec.denied:
                return spec.denied["-" + letter]
        j = 0
        while j < len(letters):
            letter = letters[j]
            j += 1
            rest = letters[j:]
            if letter in spec.short:
                options.append(("-" + letter, None))
                continue
            if letter in spec.short_optional:
                options.append(("-" + letter, rest or None))
                break
            if letter in spec.short_value:
                if rest:
                    if not spec.attached:
                        return f"in `{command} {_quote(text)}`, `-{letter}` must come last"
                    options.append(("-" + letter, rest))
                    break
                taken = _take_value(command, "-" + letter, args, i)
                if isinstance(taken, str):
                    return taken
                options.append(("-" + letter, taken.text))
                i += 1
                break
            return _unknown(command, "-" + letter)
    return _Parsed(tuple(options), tuple(operands))


def _options_rule(
    spec: _Options, check: Callable[[str, _Parsed], str | None] | None = None
) -> _Rule:
    def rule(name: str, args: Sequence[_Word]) -> str | None:
        parsed = _parse_options(name, args, spec)
        if isinstance(parsed, str):
            return parsed
        return check(name, parsed) if check is not None else None

    return rule


# --- sed ------------------------------------------------------------------------------

_SED_IN_PLACE: Final = "`sed -i` edits files in place"
_SED_SCRIPT_FILE: Final = "`sed -f` runs a script from a file the checker cannot inspect"
_SED_OPTIONS: Final = _Options(
    short="nrEsuzb",
    short_value="el",
    long=_longs(
        "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox "
        "follow-symlinks binary help version"
    ),
    long_value=_longs("expression line-length"),
    denied={
        "-i": _SED_IN_PLACE,
        "--in-place": _SED_IN_PLACE,
        "-f": _SED_SCRIPT_FILE,
        "--file": _SED_SCRIPT_FILE,
    },
)
_SED_NO_ARGUMENT: Final = frozenset("=dDgGhHnNpPxzF")


def _check_sed(name: str, args: Sequence[_Word]) -> str | None:
    parsed = _parse_options(name, args, _SED_OPTIONS)
    if isinstance(parsed, str):
        return parsed
    scripts = parsed.values("-e", "--expression")
    if not scripts:
        if not parsed.operands:
            return "`sed` needs a script"
        script = parsed.operands[0]
        if not script.exact:
            return _inexact(name, script)
        scripts = [script.text]
    return _sed_script_problem("\n".join(scripts))


def _sed_script_problem(script: str) -> str | None:
    """Why a GNU sed script could write, run or read something, or None when it only prints.

    The parser follows GNU sed's own rules for where commands, regexes, replacements and
    texts end, and refuses anything it does not recognise.
    """
    s, n, i, depth = script, len(script), 0, 0
    while True:
        while i < n and s[i] in " \t\n;":
            i += 1
        if i >= n:
            break
        if s[i] == "#":
            end = s.find("\n", i)
            if end < 0:
                break
            i = end
            continue
        start = i
        i = _sed_address(s, i, first=True)
        if i < 0:
            return "the sed script has an address plan mode cannot read"
        has_address = i > start
        i = _skip_blanks(s, i)
        if has_address and i < n and s[i] == ",":
            i = _sed_address(s, _skip_blanks(s, i + 1), first=False)
            if i < 0:
                return "the sed script has an address plan mode cannot read"
        i = _skip_blanks(s, i)
        while i < n and s[i] == "!":
            i = _skip_blanks(s, i + 1)
        if i >= n:
            return "the sed script ends in the middle of a command"
        command = s[i]
        i += 1
        if command == "{":
            depth += 1
            continue
        if command == "}":
            depth -= 1
            if depth < 0:
                return "the sed script has an unmatched `}`"
        elif command in "wW":
            return "`sed` `w` commands write to files"
        elif command == "e":
            return "`sed` `e` runs shell commands"
        elif command in "rR":
            return "`sed` `r` reads other files into the output; use `cat` for that"
        elif command in _SED_NO_ARGUMENT:
            pass
        elif command in "qQl":
            i = _skip_blanks(s, i)
            while i < n and s[i].isdigit():
                i += 1
        elif command in "btT:v":
            end = i
            while end < n and s[end] not in ";\n":
                end += 1
            label = s[i:end].strip()
            if (command == ":" and (has_address or not label)) or not re.fullmatch(
                r"[A-Za-z0-9_.-]*", label
            ):
                return f"the sed label `{_quote(label)}` is not one plan mode can read"
            i = end
            continue
        elif command in "aic":
            i = _skip_blanks(s, i)
            if s.startswith("\\\n", i):
                i += 2
            while i < n and s[i] != "\n":
                i += 2 if s[i] == "\\" else 1
            continue
        elif command in "sy":
            if i >= n or s[i] in "\n\\":
                return f"the sed `{command}` command has no delimiter"
            delimiter = s[i]
            i = _sed_delimited(s, i + 1, delimiter)
            if i >= 0:
                i = _sed_delimited(s, i, delimiter)
            if i < 0:
                return f"the sed `{command}` command is not terminated"
            while command == "s" and i < n and (s[i] in "gpiImM \t" or s[i].isdigit()):
                i += 1
            if command == "s" and i < n and s[i] == "w":
                return "`sed` `s///w` writes to a file"
            if command == "s" and i < n and s[i] == "e":
                return "`sed` `s///e` runs the result as a shell command"
        else:
            return f"the sed command `{_quote(command)}` is not one plan mode knows to be read-only"
        i = _skip_blanks(s, i)
        if i < n and s[i] not in ";\n}#":
            return f"the sed script has unexpected text after `{_quote(command)}`"
    if depth:
        return "the sed script has an unmatched `{`"
    return None


def _skip_blanks(s: str, i: int) -> int:
    while i < len(s) and s[i] in " \t":
        i += 1
    return i


def _sed_address(s: str, i: int, *, first: bool) -> int:
    """Skip one sed address starting at ``s[i]``; -1 when it is malformed."""
    n = len(s)
    if i >= n:
        return i
    c = s[i]
    if c.isdigit() or (not first and c in "+~"):
        i += 1
        while i < n and s[i].isdigit():
            i += 1
        if first and i < n and s[i] == "~":
            i += 1
            while i < n and s[i].isdigit():
                i += 1
        return i
    if c == "$":
        return i + 1
    if c == "/":
        i = _sed_delimited(s, i + 1, "/")
    elif c == "\\":
        if i + 1 >= n or s[i + 1] in "\n\\":
            return -1
        i = _sed_delimited(s, i + 2, s[i + 1])
    else:
        return i
    while 0 <= i < n and s[i] in "IM":
        i += 1
    return i


def _sed_delimited(s: str, i: int, delimiter: str) -> int:
    """Index after the unescaped ``delimiter`` that closes a regex or replacement, or -1."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == delimiter:
            return i + 1
        if c == "\n":
            return -1
        i += 1
    return -1


# --- awk ------------------------------------------------------------------------------

_AWK_PROGRAM_FILE: Final = "`awk -f` runs a program from a file the checker cannot inspect"
_AWK_OPTIONS: Final = _Options(
    short_value="Fv",
    long_value=_longs("field-separator assign"),
    denied={
        "-f": _AWK_PROGRAM_FILE,
        "--file": _AWK_PROGRAM_FILE,
        "-E": _AWK_PROGRAM_FILE,
        "--exec": _AWK_PROGRAM_FILE,
        "-W": "`awk -W` options can run programs or write files",
        "-i": "`awk -i` includes program files the checker cannot inspect",
        "--include": "`awk --include` includes program files the checker cannot inspect",
        "-l": "`awk -l` loads compiled extensions",
        "--load": "`awk --load` loads compiled extensions",
        "-o": "`awk -o` writes a pretty-printed program to a file",
        "--pretty-print": "`awk --pretty-print` writes the program to a file",
        "-p": "`awk -p` writes a profile to a file",
        "--profile": "`awk --profile` writes a profile to a file",
        "-d": "`awk -d` writes variables to a file",
        "--dump-variables": "`awk --dump-variables` writes variables to a file",
    },
)
_AWK_SYSTEM: Final = re.compile(r"\bsystem\b")
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


def _check_awk(name: str, args: Sequence[_Word]) -> str | None:
    parsed = _parse_options(name, args, _AWK_OPTIONS)
    if isinstance(parsed, str):
        return parsed
    if not parsed.operands:
        return "`awk` needs a program"
    program = parsed.operands[0]
    if not program.exact:
        return _inexact(name, program)
    return _awk_program_problem(program.text)


def _awk_program_problem(program: str) -> str | None:
    """Why an awk program could run commands or write files, or None when it only reads.

    Text-level checks catch ``system``, gawk's ``@`` (directives and indirect calls, which
    can reach any function) and ``/inet`` network files even inside strings. The token
    checks then refuse every pipe (``cmd | getline``, ``print | cmd``, ``|&``) and any ``>``
    at the top level of a ``print`` or ``printf`` statement, where it is a redirection.
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
    for kind, text in tokens:
        if kind == "op" and text in ("|", "|&"):
            return '`awk` pipes (`"cmd" | getline`, `print | "cmd"`) run shell commands'
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


# --- find -----------------------------------------------------------------------------

_FIND_FLAGS: Final = _set(
    "-print -print0 -ls -prune -quit -true -false -empty -readable -writable -executable "
    "-nouser -nogroup -depth -d -follow -xdev -mount -daystart -noleaf -ignore_readdir_race "
    "-noignore_readdir_race -warn -nowarn -not -a -and -o -or ! ( ) , -help --help -version "
    "--version"
)
_FIND_WITH_VALUE: Final = _set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname -type "
    "-xtype -size -mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -used -user "
    "-group -uid -gid -perm -links -inum -samefile -maxdepth -mindepth -regextype -fstype "
    "-printf -context"
)
_FIND_DENIED: Final = {
    "-exec": "`find -exec` runs commands",
    "-execdir": "`find -execdir` runs commands",
    "-ok": "`find -ok` runs commands",
    "-okdir": "`find -okdir` runs commands",
    "-delete": "`find -delete` deletes files",
    "-fprint": "`find -fprint` writes to a file",
    "-fprint0": "`find -fprint0` writes to a file",
    "-fprintf": "`find -fprintf` writes to a file",
    "-fls": "`find -fls` writes to a file",
}
_FIND_NEWER_XY: Final = re.compile(r"-newer[aBcmt][aBcmt]")


def _check_find(name: str, args: Sequence[_Word]) -> str | None:
    i, n = 0, len(args)
    while i < n and args[i].exact and args[i].text in ("-H", "-L", "-P", "-D"):
        i += 2 if args[i].text == "-D" else 1
    while i < n and args[i].exact and re.fullmatch(r"-O[0-9]", args[i].text):
        i += 1
    while i < n:
        word = args[i]
        if word.exact:
            if word.text.startswith("-") or word.text in ("(", ")", "!", ","):
                break
        elif not (word.lead_safe and word.text[:1] not in ("(", ")", "!", ",")):
            return _inexact(name, word)
        i += 1
    while i < n:
        word = args[i]
        if not word.exact:
            return _inexact(name, word)
        text = word.text
        if text in _FIND_DENIED:
            return _FIND_DENIED[text]
        if text in _FIND_FLAGS:
            i += 1
        elif text in _FIND_WITH_VALUE or _FIND_NEWER_XY.fullmatch(text):
            if i + 1 >= n:
                return f"`find {text}` needs a value"
            if not args[i + 1].exact:
                return _inexact(name, args[i + 1])
            i += 2
        else:
            return f"`find {_quote(text)}` is not a test or action plan mode knows to be read-only"
    return None


# --- other commands with dangerous flags ----------------------------------------------

_SORT_OUTPUT: Final = "`sort -o` writes its output to a file"
_SORT_OPTIONS: Final = _Options(
    short="bdfgiMhnRrVcCmsuz",
    short_value="ktST",
    long=_longs(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse "
        "version-sort merge stable unique zero-terminated debug help version"
    ),
    long_value=_longs(
        "key field-separator buffer-size temporary-directory batch-size files0-from "
        "random-source parallel sort"
    ),
    long_optional=_longs("check"),
    denied={
        "-o": _SORT_OUTPUT,
        "--output": _SORT_OUTPUT,
        "--compress-program": "`sort --compress-program` runs a program",
    },
)

_UNIQ_OPTIONS: Final = _Options(
    short="cdDiuz",
    short_value="fsw",
    long=_longs("count repeated ignore-case unique zero-terminated help version"),
    long_value=_longs("skip-fields skip-chars check-chars"),
    long_optional=_longs("all-repeated group"),
    numeric=True,
)


def _uniq_operands(name: str, parsed: _Parsed) -> str | None:
    if len(parsed.operands) > 1:
        return "`uniq IN OUT` writes to OUT"
    for word in parsed.operands:
        if not word.single:
            return (
                f"`uniq` only takes one plain input file: `{_quote(word.source)}` holds "
                f"{word.why}, which could add an output file it would overwrite"
            )
    return None


_TREE_OPTIONS: Final = _Options(
    short="adlfxqNQpugshDFrtcUvCnASJXi",
    short_value="LPIHT",
    long=_longs(
        "noreport inodes device dirsfirst filesfirst gitignore matchdirs prune du si "
        "ignore-case info nolinks metafirst fromfile version help"
    ),
    long_value=_longs("charset filelimit timefmt sort hintro houtro gitfile infofile"),
    denied={
        "-o": "`tree -o` writes its output to a file",
        "-R": "`tree -R` writes an HTML file into every directory",
    },
    attached=False,
    abbreviations=False,
)


def _plain_operands(name: str, parsed: _Parsed) -> str | None:
    """For commands that may not honour ``--``: no operand may become a flag."""
    for word in parsed.operands:
        if not (word.exact or word.lead_safe):
            return _inexact(name, word)
    return None


_DATE_SET: Final = "`date -s` sets the system clock"
_DATE_OPTIONS: Final = _Options(
    short="uR",
    short_value="dfr",
    short_optional="I",
    long=_longs("utc universal rfc-email debug resolution help version"),
    long_value=_longs("date file reference rfc-3339"),
    long_optional=_longs("iso-8601"),
    denied={"-s": _DATE_SET, "--set": _DATE_SET},
)


def _date_operands(name: str, parsed: _Parsed) -> str | None:
    for word in parsed.operands:
        if not (word.exact and word.text.startswith("+")):
            return "`date` only takes a `+FORMAT` operand; `date MMDDhhmm` sets the system clock"
    return None


_JQ_OPTIONS: Final = _Options(
    short="rjacnesSCMRhV",
    short_value="fL",
    long=_longs(
        "raw-output join-output ascii-output compact-output null-input exit-status slurp "
        "sort-keys color-output monochrome-output raw-input tab seq stream stream-errors "
        "unbuffered args jsonargs raw-output0 help version"
    ),
    long_value=_longs("indent from-file"),
    long_pair=_longs("arg argjson slurpfile rawfile"),
    abbreviations=False,
)

_RG_OPTIONS: Final = _Options(
    short="abcFHhIiLlNnopPqSsUuVvwx0.",
    short_value="ABCdEefgjMmrTt",
    long=_longs(
        "text binary no-binary byte-offset count count-matches column no-column crlf "
        "no-crlf debug trace files files-with-matches files-without-match fixed-strings "
        "no-fixed-strings follow no-follow heading no-heading hidden no-hidden ignore-case "
        "include-zero no-include-zero invert-match no-invert-match json no-json "
        "line-buffered block-buffered line-number no-line-number line-regexp multiline "
        "no-multiline multiline-dotall no-multiline-dotall mmap no-mmap no-config no-ignore "
        "no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-parent "
        "no-ignore-vcs no-ignore-messages no-messages no-require-git no-unicode unicode null "
        "null-data one-file-system no-one-file-system only-matching passthru passthrough "
        "pcre2 no-pcre2 pcre2-version pretty quiet smart-case case-sensitive stats no-stats "
        "trim no-trim type-list unrestricted vimgrep with-filename no-filename word-regexp "
        "max-columns-preview no-max-columns-preview glob-case-insensitive "
        "no-glob-case-insensitive auto-hybrid-regex no-search-zip sort-files no-sort-files "
        "help version"
    ),
    long_value=_longs(
        "after-context before-context context color colors context-separator "
        "dfa-size-limit encoding engine field-context-separator field-match-separator file "
        "glob iglob ignore-file max-columns max-count max-depth maxdepth max-filesize "
        "path-separator regexp regex-size-limit replace sort sortr threads type type-not "
        "type-add type-clear hyperlink-format"
    ),
    denied={
        "-z": "`rg -z` runs decompression programs",
        "--search-zip": "`rg --search-zip` runs decompression programs",
        "--pre": "`rg --pre` runs a program on every file",
        "--pre-glob": "`rg --pre-glob` runs a preprocessor program",
        "--hostname-bin": "`rg --hostname-bin` runs a program",
    },
    abbreviations=False,
)

_FILE_OPTIONS: Final = _Options(
    short="bcdEhiklLNnrsvzZ0",
    short_value="efFmP",
    long=_longs(
        "brief checking-printout debug dereference no-dereference keep-going list mime "
        "mime-type mime-encoding no-buffer no-pad raw special-files uncompress "
        "uncompress-noreport print0 extension apple help version"
    ),
    long_value=_longs("exclude exclude-quiet files-from separator magic-file parameter"),
    denied={
        "-C": "`file -C` compiles a magic file and writes it out",
        "--compile": "`file --compile` writes a compiled magic file",
        "-p": "`file -p` resets access times on the files it reads",
        "--preserve-date": "`file --preserve-date` resets access times on the files it reads",
        "-S": "`file -S` turns off its own sandbox",
        "--no-sandbox": "`file --no-sandbox` turns off its own sandbox",
    },
)

_XXD_FLAGS: Final = _set(
    "-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -i -include -p -ps -postscript "
    "-plain -u -d -r -revert -h -help -v -version"
)
_XXD_WITH_VALUE: Final = _set("-c -cols -g -groupsize -l -len -n -name -o -s -seek -R")
_XXD_ATTACHED: Final = re.compile(r"-[cglos][+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")


def _check_xxd(name: str, args: Sequence[_Word]) -> str | None:
    operands: list[_Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.exact:
            if not (word.lead_safe and word.single):
                return _inexact(name, word)
            operands.append(word)
            continue
        text = word.text
        if text == "--":
            operands.extend(args[i:])
            break
        if not text.startswith("-") or text == "-":
            operands.append(word)
        elif text in _XXD_WITH_VALUE:
            if i >= len(args) or not args[i].exact:
                return f"`xxd {text}` needs a plain value"
            i += 1
        elif text not in _XXD_FLAGS and not _XXD_ATTACHED.fullmatch(text):
            return _unknown(name, text)
    if len(operands) > 1:
        return "`xxd IN OUT` writes to OUT"
    if any(not word.single for word in operands):
        return "`xxd` only takes one plain input file; a glob could add an output file"
    return None


def _check_printf(name: str, args: Sequence[_Word]) -> str | None:
    if not args:
        return None
    first = args[0]
    if not first.exact:
        return (
            "`printf` needs a plain format string: an expansion could become `-v`, which "
            "assigns a shell variable"
        )
    if first.text.startswith("-v"):
        return "`printf -v` assigns a shell variable"
    if first.text == "--":
        if len(args) > 1 and not args[1].exact:
            return "`printf` needs a plain format string"
        return None
    if first.text.startswith("-") and first.text != "-":
        return _unknown(name, first.text)
    return None


_TEST_UNARY: Final = _set("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -n -z -o")
_TEST_BINARY: Final = _set("= == != < > -eq -ne -lt -le -gt -ge -nt -ot -ef -a -o")


def _check_test(name: str, args: Sequence[_Word]) -> str | None:
    """``test`` and ``[``: refuse ``-v``/``-R`` (they evaluate array subscripts, which can
    run code) and any shape in which an expanded word could take their place."""
    if name == "[":
        if not args or not (args[-1].exact and args[-1].text == "]"):
            return "`[` needs a closing `]`"
        args = args[:-1]
    for word in args:
        if word.exact and word.text in ("-v", "-R"):
            return (
                f"`{name} {word.text}` looks up variables and evaluates array subscripts, "
                "which can run code"
            )
    if all(word.exact for word in args):
        return None

    def flag(i: int, allowed: frozenset[str]) -> bool:
        return args[i].exact and args[i].text in allowed

    def operand(i: int) -> bool:
        return args[i].single

    count = len(args)
    negation = frozenset({"!"})
    fixed_shape = (
        (count == 1 and operand(0))
        or (count == 2 and flag(0, _TEST_UNARY | negation) and operand(1))
        or (count == 3 and flag(1, _TEST_BINARY) and operand(0) and operand(2))
        or (count == 3 and flag(0, negation) and flag(1, _TEST_UNARY) and operand(2))
        or (
            count == 4 and flag(0, negation) and flag(2, _TEST_BINARY) and operand(1) and operand(3)
        )
    )
    if fixed_shape:
        return None
    return (
        f'`{name}` with expansions must have a fixed shape such as `[ -f "$f" ]` or '
        f'`[ "$a" = "$b" ]`: an unquoted or extra word could become `-v`, which runs code'
    )


def _check_cd(name: str, args: Sequence[_Word]) -> str | None:
    i = 0
    while i < len(args) and args[i].exact and args[i].text in ("-L", "-P", "-e", "-@"):
        i += 1
    if i < len(args) and args[i].exact and args[i].text == "--":
        i += 1
    if len(args) - i > 1:
        return "`cd` takes one directory"
    return None


def _check_command_builtin(name: str, args: Sequence[_Word]) -> str | None:
    if args and args[0].exact and args[0].text in ("-v", "-V"):
        return None
    return (
        "`command` runs another command past the shell's usual lookup; only "
        "`command -v NAME` is allowed"
    )


# --- git ------------------------------------------------------------------------------

_GIT_TEXTCONV: Final = "`--textconv` runs text-conversion programs configured for the repository"
_GIT_EXT_DIFF: Final = "`--ext-diff` runs an external diff program"
_GIT_OUTPUT: Final = "`--output` writes to a file"
_GIT_SIGNATURE: Final = "`--show-signature` runs gpg to check signatures"

_GIT_DIFF_FLAGS: Final = (
    "patch no-patch raw patch-with-raw patch-with-stat indent-heuristic minimal patience "
    "histogram compact-summary numstat shortstat cumulative summary name-only name-status "
    "renames rename-empty check full-index binary find-copies-harder "
    "irreversible-delete pickaxe-all pickaxe-regex text ignore-cr-at-eol "
    "ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines "
    "function-context exit-code quiet no-ext-diff no-textconv no-prefix default-prefix "
    "ita-invisible-in-index ita-visible-in-index follow cached staged merge-base no-index "
    "base ours theirs"
)
_GIT_DIFF_VALUES: Final = (
    "unified anchored diff-algorithm word-diff-regex diff-filter find-object skip-to "
    "rotate-to src-prefix dst-prefix line-prefix inter-hunk-context output-indicator-new "
    "output-indicator-old output-indicator-context stat-width stat-name-width "
    "stat-graph-width stat-count ws-error-highlight ignore-matching-lines orderfile"
)
_GIT_DIFF_OPTIONAL: Final = (
    "stat dirstat dirstat-by-file color color-moved color-moved-ws word-diff color-words "
    "submodule abbrev find-renames find-copies break-rewrites relative ignore-submodules"
)
_GIT_LOG_FLAGS: Final = (
    "all reflog alternate-refs single-worktree ignore-missing merges first-parent "
    "exclude-first-parent-only not stdin cherry-mark cherry-pick "
    "left-only right-only cherry walk-reflogs merge boundary simplify-by-decoration "
    "show-pulls full-history dense sparse simplify-merges date-order author-date-order "
    "topo-order reverse do-walk oneline abbrev-commit relative-date parents children "
    "left-right graph source use-mailmap mailmap full-diff log-size all-match "
    "invert-grep regexp-ignore-case basic-regexp extended-regexp fixed-strings "
    "perl-regexp remove-empty cc dd combined-all-paths remerge-diff standard-notes "
    "clear-decorations count objects objects-edge "
    "object-names timestamp header"
)
_GIT_LOG_VALUES: Final = (
    "max-count skip since after until before author committer grep grep-reflog "
    "min-parents max-parents glob exclude format encoding date decorate-refs "
    "decorate-refs-exclude diff-merges since-as-filter max-age min-age"
)
_GIT_LOG_OPTIONAL: Final = (
    "branches tags remotes ancestry-path no-walk pretty show-linear-break decorate "
    "expand-tabs notes show-notes"
)
_GIT_LOG_DENIED: Final = {
    "--output": _GIT_OUTPUT,
    "--ext-diff": _GIT_EXT_DIFF,
    "--textconv": _GIT_TEXTCONV,
    "--show-signature": _GIT_SIGNATURE,
}


def _git_options(
    short: str = "",
    short_value: str = "",
    short_optional: str = "",
    long: str = "",
    long_value: str = "",
    long_optional: str = "",
    long_last: str = "",
    denied: Mapping[str, str] | None = None,
    *,
    numeric: bool = False,
    abbreviations: bool = True,
) -> _Options:
    return _Options(
        short=short,
        short_value=short_value,
        short_optional=short_optional,
        long=_longs(long),
        long_value=_longs(long_value),
        long_optional=_longs(long_optional),
        long_last=_longs(long_last),
        denied=dict(denied or {}),
        numeric=numeric,
        abbreviations=abbreviations,
        negatable=True,
    )


_GIT_LOG_OPTIONS: Final = _git_options(
    short="puszRabwWDiEFPmcg",
    short_value="USGOIlnL",
    short_optional="MCBX",
    long=_GIT_DIFF_FLAGS + " " + _GIT_LOG_FLAGS,
    long_value=_GIT_DIFF_VALUES + " " + _GIT_LOG_VALUES,
    long_optional=_GIT_DIFF_OPTIONAL + " " + _GIT_LOG_OPTIONAL,
    denied=_GIT_LOG_DENIED,
    numeric=True,
)
_GIT_SHORTLOG_OPTIONS: Final = _git_options(
    short="puzRabWDiEFPmgnsec",
    short_value="USGOIlL",
    short_optional="MCBXw",
    long=_GIT_DIFF_FLAGS + " " + _GIT_LOG_FLAGS + " numbered summary email committer",
    long_value=_GIT_DIFF_VALUES + " " + _GIT_LOG_VALUES.replace(" committer", "") + " group",
    long_optional=_GIT_DIFF_OPTIONAL + " " + _GIT_LOG_OPTIONAL,
    denied=_GIT_LOG_DENIED,
    numeric=True,
)


def _git_log_formats(name: str, parsed: _Parsed) -> str | None:
    for value in parsed.values("--format", "--pretty"):
        if "%G" in value:
            return "`%G` format placeholders run gpg to check signatures"
    return None


_GIT_BLAME_OPTIONS: Final = _git_options(
    short="bltsefnpcw",
    short_value="LS",
    short_optional="MC",
    long=(
        "root show-stats reverse first-parent porcelain line-porcelain incremental progress "
        "score-debug show-name show-number show-email color-lines color-by-age minimal "
        "no-textconv"
    ),
    long_value="encoding contents date ignore-rev ignore-revs-file",
    long_optional="abbrev",
    denied={"--textconv": _GIT_TEXTCONV},
)
_GIT_PAGER: Final = "`git grep -O` opens the matching files in a pager or editor"
_GIT_GREP_OPTIONS: Final = _git_options(
    short="iIwvhHEGPFnlLzocpWqar",
    short_value="ABCmef",
    long=(
        "ignore-case word-regexp invert-match full-name extended-regexp basic-regexp "
        "perl-regexp fixed-strings line-number column files-with-matches name-only "
        "files-without-match null only-matching count break heading show-function "
        "function-context quiet cached untracked index exclude-standard recurse-submodules "
        "text no-textconv recursive and or not all-match"
    ),
    long_value="after-context before-context context max-count threads max-depth",
    long_optional="color",
    denied={
        "-O": _GIT_PAGER,
        "--open-files-in-pager": _GIT_PAGER,
        "--textconv": _GIT_TEXTCONV,
    },
    numeric=True,
)
_GIT_STATUS_OPTIONS: Final = _git_options(
    short="sbvz",
    short_optional="u",
    long="short branch show-stash long verbose ahead-behind renames null",
    long_optional="porcelain untracked-files ignored ignore-submodules column find-renames",
)
_GIT_FILTERS: Final = "contains no-contains merged no-merged points-at"
_GIT_BRANCH_OPTIONS: Final = _git_options(
    short="arlvi",
    long="all remotes list verbose show-current ignore-case omit-empty",
    long_value="sort format",
    long_optional="abbrev color column",
    long_last=_GIT_FILTERS,
    denied=dict.fromkeys(
        _set(
            "-d -D -m -M -c -C -f -u -t --delete --move --copy --force --set-upstream-to "
            "--set-upstream --unset-upstream --edit-description --track --create-reflog "
            "--recurse-submodules"
        ),
        "this `git branch` form creates, deletes, renames or reconfigures branches",
    ),
)
_GIT_TAG_OPTIONS: Final = _git_options(
    short="li",
    short_optional="n",
    long="list ignore-case omit-empty",
    long_value="sort format",
    long_optional="color column",
    long_last=_GIT_FILTERS,
    denied=dict.fromkeys(
        _set(
            "-a -s -u -f -d -v -m -F -e --annotate --sign --local-user --force --delete "
            "--verify --message --file --edit --cleanup --create-reflog"
        ),
        "this `git tag` form creates, deletes, signs or verifies tags",
    ),
)


def _git_listing(name: str, parsed: _Parsed) -> str | None:
    listing = parsed.has("-l", "--list")
    filtering = parsed.has(*(_longs(_GIT_FILTERS)))
    if parsed.operands and not (listing or (name == "git branch" and filtering)):
        return f"`{name} NAME` creates a {name.split()[1]}; only listing forms are allowed"
    return None


_GIT_REV_PARSE_OPTIONS: Final = _git_options(
    short="q",
    long=(
        "show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir "
        "is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository "
        "verify quiet symbolic symbolic-full-name all revs-only no-revs flags sq not "
        "local-env-vars show-ref-format shared-index-path show-superproject-working-tree "
        "end-of-options"
    ),
    long_value=(
        "glob since after until before default git-path path-format disambiguate exclude "
        "prefix resolve-git-dir"
    ),
    long_optional="abbrev-ref short branches tags remotes show-object-format",
    abbreviations=False,
)
_GIT_LS_FILES_OPTIONS: Final = _git_options(
    short="cdoisukmztvf",
    short_value="xX",
    long=(
        "cached deleted others ignored stage unmerged killed modified directory "
        "empty-directory eol deduplicate full-name recurse-submodules error-unmatch debug "
        "sparse exclude-standard resolve-undo"
    ),
    long_value="exclude exclude-from exclude-per-directory with-tree format",
    long_optional="abbrev",
)
_GIT_LS_TREE_OPTIONS: Final = _git_options(
    short="drtlz",
    long="long name-only name-status object-only full-name full-tree",
    long_value="format",
    long_optional="abbrev",
)
_GIT_FILTER_PROGRAMS: Final = "`git cat-file --filters` runs filter programs"
_GIT_CAT_FILE_OPTIONS: Final = _git_options(
    short="tsepZ",
    long=(
        "batch-all-objects buffer unordered follow-symlinks allow-unknown-type mailmap use-mailmap"
    ),
    long_optional="batch batch-check batch-command",
    denied={"--textconv": _GIT_TEXTCONV, "--filters": _GIT_FILTER_PROGRAMS},
)
_GIT_DESCRIBE_OPTIONS: Final = _git_options(
    long="all tags contains exact-match debug long always first-parent",
    long_value="candidates match exclude",
    long_optional="abbrev dirty broken",
)
_GIT_CONFIG_ACTIONS: Final = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l"}
)
_GIT_CONFIG_OPTIONS: Final = _git_options(
    short="lz",
    short_value="f",
    long=(
        "global system local worktree show-origin show-scope null name-only includes bool "
        "int bool-or-int path expiry-date get get-all get-regexp get-urlmatch list"
    ),
    long_value="file blob type default",
)


def _git_config_reads(name: str, parsed: _Parsed) -> str | None:
    actions = {option for option, _ in parsed.options if option in _GIT_CONFIG_ACTIONS}
    if len(actions) != 1:
        return (
            "`git config` is only allowed with one of `--get`, `--get-all`, `--get-regexp` or "
            "`--list`; other forms change configuration"
        )
    limit = 0 if actions & {"--list", "-l"} else 2
    if len(parsed.operands) > limit:
        return "`git config` with these operands would change configuration"
    return None


_GIT_MERGE_BASE_OPTIONS: Final = _git_options(
    short="a", long="all octopus independent is-ancestor fork-point"
)
_GIT_FOR_EACH_REF_OPTIONS: Final = _git_options(
    short="sp",
    long="shell perl python tcl ignore-case omit-empty",
    long_value="count sort format exclude",
    long_optional="color",
    long_last=_GIT_FILTERS,
)
_GIT_SHOW_REF_OPTIONS: Final = _git_options(
    short="dsq",
    long="head dereference tags heads branches verify quiet",
    long_optional="hash abbrev",
)
_GIT_COUNT_OBJECTS_OPTIONS: Final = _git_options(short="vH", long="verbose human-readable")
_GIT_WORKTREE_LIST_OPTIONS: Final = _git_options(short="vz", long="porcelain verbose")
_GIT_NAME_REV_OPTIONS: Final = _git_options(
    long="name-only tags all undefined always", long_value="refs exclude"
)
_GIT_CHECK_IGNORE_OPTIONS: Final = _git_options(
    short="qvnz", long="quiet verbose non-matching index stdin"
)


_GitRule = Callable[[str, Sequence[_Word]], str | None]


def _git_rule(
    spec: _Options, check: Callable[[str, _Parsed], str | None] | None = None
) -> _GitRule:
    def rule(label: str, args: Sequence[_Word]) -> str | None:
        parsed = _parse_options(label, args, spec)
        if isinstance(parsed, str):
            return parsed
        return check(label, parsed) if check is not None else None

    return rule


_git_log: Final = _git_rule(_GIT_LOG_OPTIONS, _git_log_formats)


def _git_remote(label: str, args: Sequence[_Word]) -> str | None:
    if not args or (len(args) == 1 and args[0].exact and args[0].text in ("-v", "--verbose")):
        return None
    return (
        "only `git remote` and `git remote -v` are allowed; other forms change remotes or "
        "use the network"
    )


def _git_stash(label: str, args: Sequence[_Word]) -> str | None:
    if args and args[0].exact and args[0].text in ("list", "show"):
        return _git_log(f"{label} {args[0].text}", args[1:])
    return (
        "only `git stash list` and `git stash show` are allowed; other forms change the "
        "stash or the work tree"
    )


def _git_reflog(label: str, args: Sequence[_Word]) -> str | None:
    if args and args[0].exact and args[0].text == "show":
        return _git_log(f"{label} show", args[1:])
    if not args or (args[0].exact and args[0].text.startswith("-")):
        return _git_log(label, args)
    return "only `git reflog` and `git reflog show` are allowed; other forms change the reflog"


def _git_worktree(label: str, args: Sequence[_Word]) -> str | None:
    if args and args[0].exact and args[0].text == "list":
        return _git_rule(_GIT_WORKTREE_LIST_OPTIONS)(f"{label} list", args[1:])
    return "only `git worktree list` is allowed; other forms change work trees"


def _git_version(label: str, args: Sequence[_Word]) -> str | None:
    if all(word.exact and word.text == "--build-options" for word in args):
        return None
    return _unknown(label, args[0].source)


_GIT_SUBCOMMANDS: Final[Mapping[str, _GitRule]] = {
    "log": _git_log,
    "show": _git_log,
    "diff": _git_log,
    "whatchanged": _git_log,
    "rev-list": _git_log,
    "shortlog": _git_rule(_GIT_SHORTLOG_OPTIONS, _git_log_formats),
    "blame": _git_rule(_GIT_BLAME_OPTIONS),
    "annotate": _git_rule(_GIT_BLAME_OPTIONS),
    "grep": _git_rule(_GIT_GREP_OPTIONS),
    "status": _git_rule(_GIT_STATUS_OPTIONS),
    "branch": _git_rule(_GIT_BRANCH_OPTIONS, _git_listing),
    "tag": _git_rule(_GIT_TAG_OPTIONS, _git_listing),
    "rev-parse": _git_rule(_GIT_REV_PARSE_OPTIONS),
    "ls-files": _git_rule(_GIT_LS_FILES_OPTIONS),
    "ls-tree": _git_rule(_GIT_LS_TREE_OPTIONS),
    "cat-file": _git_rule(_GIT_CAT_FILE_OPTIONS),
    "describe": _git_rule(_GIT_DESCRIBE_OPTIONS),
    "config": _git_rule(_GIT_CONFIG_OPTIONS, _git_config_reads),
    "merge-base": _git_rule(_GIT_MERGE_BASE_OPTIONS),
    "for-each-ref": _git_rule(_GIT_FOR_EACH_REF_OPTIONS),
    "show-ref": _git_rule(_GIT_SHOW_REF_OPTIONS),
    "count-objects": _git_rule(_GIT_COUNT_OBJECTS_OPTIONS),
    "name-rev": _git_rule(_GIT_NAME_REV_OPTIONS),
    "check-ignore": _git_rule(_GIT_CHECK_IGNORE_OPTIONS),
    "remote": _git_remote,
    "stash": _git_stash,
    "reflog": _git_reflog,
    "worktree": _git_worktree,
    "version": _git_version,
}

_GIT_GLOBAL_FLAGS: Final = _set(
    "--no-pager -P --no-replace-objects --literal-pathspecs --glob-pathspecs "
    "--noglob-pathspecs --icase-pathspecs --no-optional-locks --version"
)
_GIT_GLOBAL_DENIED: Final = {
    "-c": "`git -c` changes configuration, which can make git run programs",
    "--config-env": "`git --config-env` changes configuration, which can make git run programs",
    "--exec-path": "`git --exec-path` changes where git finds the programs it runs",
    "--git-dir": "`git --git-dir` points git at another repository",
    "--work-tree": "`git --work-tree` points git at another work tree",
    "--namespace": "`git --namespace` changes which refs git uses",
    "--super-prefix": "`git --super-prefix` is internal to git",
    "-p": "`git -p` runs a pager",
    "--paginate": "`git --paginate` runs a pager",
    "--bare": "`git --bare` treats the directory as a bare repository",
}
_GIT_NOT_READ_ONLY: Final = {
    **dict.fromkeys(
        _set(
            "add am apply checkout switch restore commit merge rebase reset revert cherry-pick "
            "rm mv clean init gc prune repack notes update-ref update-index write-tree "
            "commit-tree symbolic-ref replace sparse-checkout maintenance read-tree mktree "
            "mktag hash-object stage format-patch fsck pack-refs"
        ),
        "changes the repository or the work tree",
    ),
    **dict.fromkeys(
        _set("fetch pull push clone ls-remote send-email request-pull archive svn p4 lfs"),
        "uses the network or writes files",
    ),
    **dict.fromkeys(
        _set(
            "difftool mergetool instaweb web--browse help bisect filter-branch submodule daemon "
            "credential var"
        ),
        "runs other programs or reads secrets",
    ),
}


def _check_git(name: str, args: Sequence[_Word]) -> str | None:
    i = 0
    while i < len(args):
        word = args[i]
        if not word.exact:
            return _inexact(name, word)
        text = word.text
        if not text.startswith("-"):
            break
        flag = text.partition("=")[0]
        if flag in _GIT_GLOBAL_DENIED:
            return _GIT_GLOBAL_DENIED[flag]
        if text == "-C":
            if i + 1 >= len(args):
                return "`git -C` needs a directory"
            directory = args[i + 1]
            if not (directory.exact or (directory.lead_safe and directory.single)):
                return _inexact(name, directory)
            i += 2
            continue
        if text not in _GIT_GLOBAL_FLAGS:
            return _unknown(name, text)
        i += 1
    if i >= len(args):
        if any(word.text == "--version" for word in args):
            return None
        return "`git` needs a sub-command"
    subcommand = args[i].text
    label = f"git {subcommand}"
    rule = _GIT_SUBCOMMANDS.get(subcommand)
    if rule is None:
        why = _GIT_NOT_READ_ONLY.get(subcommand)
        if why is not None:
            return f"`{_quote(label)}` {why}"
        return f"`{_quote(label)}` is not a git command plan mode knows to be read-only"
    return rule(label, args[i + 1 :])


# --- the allow-list and the known dangers ---------------------------------------------

_RULES: Final[Mapping[str, _Rule]] = {
    **dict.fromkeys(
        _set(
            "cat head tail wc stat du df pwd echo ls nl cut tr comm cmp diff basename dirname "
            "realpath readlink which type uname whoami id groups grep egrep fgrep tac rev "
            "paste join fold fmt expand unexpand column md5sum sha1sum sha224sum sha256sum "
            "sha384sum sha512sum b2sum cksum sum od hexdump strings seq nproc arch true false"
        ),
        _any_arguments,
    ),
    "printf": _check_printf,
    "sed": _check_sed,
    "awk": _check_awk,
    "gawk": _check_awk,
    "mawk": _check_awk,
    "nawk": _check_awk,
    "find": _check_find,
    "sort": _options_rule(_SORT_OPTIONS),
    "uniq": _options_rule(_UNIQ_OPTIONS, _uniq_operands),
    "tree": _options_rule(_TREE_OPTIONS, _plain_operands),
    "date": _options_rule(_DATE_OPTIONS, _date_operands),
    "jq": _options_rule(_JQ_OPTIONS),
    "rg": _options_rule(_RG_OPTIONS),
    "file": _options_rule(_FILE_OPTIONS),
    "xxd": _check_xxd,
    "git": _check_git,
    "test": _check_test,
    "[": _check_test,
    "cd": _check_cd,
    "command": _check_command_builtin,
}


def _denied(reason: str, names: str) -> dict[str, str]:
    return {name: reason.format(name) for name in names.split()}


_DENIED_COMMANDS: Final[Mapping[str, str]] = {
    **_denied(
        "`{}` starts another shell, which can run anything",
        "bash sh zsh dash ksh mksh fish csh tcsh ash busybox rbash",
    ),
    **_denied(
        "`{}` runs another command, which plan mode cannot check",
        "env xargs nice nohup timeout sudo doas su stdbuf script flock chroot setsid unshare "
        "nsenter ionice taskset watch parallel strace ltrace gdb chrt runuser systemd-run "
        "fakeroot faketime time pkexec",
    ),
    **_denied(
        "`{}` runs code",
        "python python3 python2 pypy pypy3 node nodejs deno bun perl ruby irb php lua luajit "
        "tclsh wish Rscript R julia pwsh powershell osascript java javac gcc cc c++ g++ "
        "clang clang++ rustc ghc ghci swift dotnet scala groovy kotlin erl elixir iex go "
        "jshell",
    ),
    **_denied(
        "`{}` builds or tests code, which runs it",
        "make gmake cmake ninja meson bazel gradle gradlew mvn ant rake pytest tox nox jest "
        "mocha vitest ctest cargo just",
    ),
    **_denied(
        "`{}` is a package manager and can install or run code",
        "apt apt-get aptitude dpkg yum dnf rpm brew snap flatpak pip pip3 pipx uv poetry pdm "
        "conda mamba micromamba npm npx pnpm yarn gem bundle composer nix pacman apk zypper "
        "port",
    ),
    **_denied(
        "`{}` changes files",
        "cp mv rm mkdir rmdir touch chmod chown chgrp ln install truncate shred mktemp unlink "
        "rsync patch split csplit tee dd link mkfifo mknod setfacl chattr rename sponge",
    ),
    **_denied(
        "`{}` can write archives or extract files",
        "tar zip unzip gzip gunzip bzip2 bunzip2 xz unxz 7z 7za zstd unzstd ar cpio rar "
        "unrar lz4 zcat",
    ),
    **_denied(
        "`{}` talks to the network",
        "curl wget nc ncat netcat ssh scp sftp ftp telnet socat dig nslookup host ping "
        "traceroute http https aria2c openssl whois nmap",
    ),
    **_denied(
        "`{}` is an editor or pager that can run commands",
        "vi vim nvim view emacs nano ed ex less more most pico micro",
    ),
    "eval": "`eval` runs a string as a command",
    "source": "`source` runs a script in the current shell",
    ".": "`.` runs a script in the current shell",
    "exec": "`exec` replaces the shell or changes its file descriptors",
    "builtin": "`builtin` runs shell builtins past the checks",
    "trap": "`trap` sets commands the shell runs later",
    "hash": "`hash` changes where the shell finds commands",
    "alias": "aliases change what later commands mean",
    "unalias": "aliases change what later commands mean",
    "history": "`history` can write the history file",
    "fc": "`fc` runs commands again from the history",
    "coproc": "`coproc` starts a background command",
    "function": "defining shell functions is not allowed",
    **_denied(
        "`{}` assigns shell variables, which changes what later commands do",
        "read mapfile readarray declare typeset local export readonly unset",
    ),
    "let": "`let` evaluates arithmetic, where array subscripts can run code",
    **_denied(
        "`{}` changes the shell's options or limits",
        "set shopt enable ulimit umask bind complete compgen",
    ),
    **_denied(
        "`{}` controls jobs or processes",
        "kill pkill killall wait fg bg disown jobs suspend",
    ),
    **_denied(
        "`{}` changes the shell's flow or directory stack",
        "exit return break continue shift getopts pushd popd dirs logout",
    ),
}
