"""Expand a word the way bash would, before anything is judged: braces refused, an unquoted
substitution's output split into fields, globs expanded.

Bash (non-interactive, default options) expands an unquoted ``*``, ``?`` or ``[…]`` against
the directory the command runs in: each ``/``-separated part is matched against the entries
of the directories found so far; a leading ``.`` must be matched literally and ``.``/``..``
never match; the results are sorted; a pattern matching nothing stays as it is written
(after quote removal). The filter does the same here, within fixed bounds, and the expanded
words become the argv that is judged and then run, so no file created between the check and
the run can change what runs.

Brace expansion (``{a,b}``, ``{1..9}``) is refused rather than expanded: a model rarely needs
it, and refusing it keeps a second grammar out of the filter.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from plancord.core.shell.readonly.parameters import check_home_glob
from plancord.core.shell.readonly.raw import Word
from plancord.core.shell.readonly.verdict import Denied, shown

MAX_GLOB_ENTRIES: Final = 20_000
"""Directory entries one command's globs may look at; more denies."""

MAX_GLOB_RESULTS: Final = 2_000
"""Words one command's globs may produce; more denies."""

_GLOB_CHARACTERS: Final = frozenset("*?[")


class GlobBudget:
    """What is left of one command's allowance of directory entries and results."""

    __slots__ = ("entries", "results")

    def __init__(self) -> None:
        self.entries = MAX_GLOB_ENTRIES
        self.results = MAX_GLOB_RESULTS

    def spend(self, entries: int = 0, results: int = 0) -> None:
        self.entries -= entries
        self.results -= results
        if self.entries < 0:
            raise Denied("the globs look at too many files; name the files or a directory")
        if self.results < 0:
            raise Denied("the globs match too many files; narrow the pattern")


def check_braces(word: Word) -> None:
    """Refuse a word bash would brace-expand: unquoted ``{`` … ``}`` around ``,`` or ``..``."""
    text = word.text
    opens: list[int] = []
    for index, char in enumerate(text):
        if word.quoted[index]:
            continue
        if char == "{":
            opens.append(index)
        elif char == "}" and opens:
            start = opens.pop()
            inner = [
                (text[k], word.quoted[k])
                for k in range(start + 1, index)
                if not any(start < o < k for o in opens)
            ]
            has_comma = any(c == "," and not q for c, q in inner)
            body = text[start + 1 : index]
            if has_comma or (".." in body and not any(word.quoted[start + 1 : index])):
                raise Denied(
                    f"brace expansion in `{shown(word.source)}` makes words plan mode would "
                    "have to guess; write them out"
                )


def is_glob(word: Word) -> bool:
    return any(c in _GLOB_CHARACTERS and not q for c, q in zip(word.text, word.quoted, strict=True))


def fields(word: Word) -> list[Word]:
    """The fields bash splits ``word`` into. Only an unquoted substitution's output splits
    (``Word.separators``): at every run of IFS whitespace it held, its leading and trailing
    runs included, so a word whose substitutions printed only white space, or nothing, and
    that holds nothing else, gives no field at all and is dropped."""
    separators = word.separators
    if separators is None:
        return [word]
    found: list[Word] = []
    start: int | None = None
    for index, separator in enumerate((*separators, True)):
        if not separator and start is None:
            start = index
        elif separator and start is not None:
            found.append(Word(word.text[start:index], word.quoted[start:index], word.source))
            start = None
    return found


def expand(word: Word, cwd: Path | None, budget: GlobBudget) -> list[str]:
    """The words bash makes of ``word`` in ``cwd``: its fields, each itself or the sorted
    paths its glob matches. ``cwd`` None: a directory whose entries the filter does not see
    (outside what the host and the sandbox show alike), where a glob is refused."""
    check_braces(word)
    return [text for field in fields(word) for text in _pathnames(field, cwd, budget)]


def _pathnames(word: Word, cwd: Path | None, budget: GlobBudget) -> list[str]:
    if not is_glob(word):
        return [word.text]
    check_home_glob(word.text)
    if cwd is None:
        raise Denied(
            f"the glob `{shown(word.source)}` would be matched outside the workspace, whose "
            "entries plan mode does not look at; name the files"
        )
    if any(c == "\\" and not q for c, q in zip(word.text, word.quoted, strict=True)):
        raise Denied(
            f"a substitution in `{shown(word.source)}` printed a backslash and a glob "
            "character; bash's reading of that pattern depends on its version, so quote it"
        )
    parts = _split(word)
    if parts[0] == [] or any("".join(c for c, _ in part) == ".." for part in parts):
        raise Denied(
            f"the glob `{shown(word.source)}` reaches outside the workspace; globs may only "
            "name files inside it"
        )
    matches = _match(cwd, "", parts, budget)
    if not matches:
        return [word.text]
    budget.spend(results=len(matches))
    return sorted(matches, key=os.fsencode)


# A part is a list of (character, quoted) pairs between slashes.
_Part = list[tuple[str, bool]]


def _split(word: Word) -> list[_Part]:
    parts: list[_Part] = [[]]
    for char, quoted in zip(word.text, word.quoted, strict=True):
        if char == "/":
            parts.append([])
        else:
            parts[-1].append((char, quoted))
    return parts


def _match(base: Path, prefix: str, parts: list[_Part], budget: GlobBudget) -> list[str]:
    """Paths under ``base`` matching ``parts``, each prefixed by ``prefix`` (ending in ``/``)."""
    part, rest = parts[0], parts[1:]
    if not part:  # a doubled or trailing slash: bash keeps it
        return [prefix] if not rest else _match(base, prefix + "/", rest, budget)
    tokens = _tokens(part)
    names: list[str] = []
    if tokens is None:
        literal = "".join(c for c, _ in part)
        if os.path.lexists(base / (prefix + literal)):
            names.append(literal)
    else:
        hidden_ok = tokens[0] == ("lit", ".")
        try:
            with os.scandir(base / prefix if prefix else base) as entries:
                for entry in entries:
                    budget.spend(entries=1)
                    if entry.name.startswith(".") and not hidden_ok:
                        continue
                    if _matches(tokens, entry.name):
                        names.append(entry.name)
        except OSError:
            return []
    found: list[str] = []
    for name in names:
        path = prefix + name
        if not rest:
            found.append(path)
        elif (base / path).is_dir():
            found.extend(_match(base, path + "/", rest, budget))
    return found


_Token = tuple[str, str] | tuple[str, bool, str]


def _tokens(part: _Part) -> list[_Token] | None:
    """The pattern as tokens (``lit``, ``any``, ``star``, ``set``), or None if it has no glob."""
    tokens: list[_Token] = []
    has_glob = False
    i = 0
    while i < len(part):
        char, quoted = part[i]
        if quoted or char not in _GLOB_CHARACTERS:
            tokens.append(("lit", char))
        elif char == "*":
            has_glob = True
            if not (tokens and tokens[-1] == ("star", "")):
                tokens.append(("star", ""))
        elif char == "?":
            has_glob = True
            tokens.append(("any", ""))
        else:
            bracket = _bracket(part, i)
            if bracket is None:
                tokens.append(("lit", "["))
            else:
                has_glob = True
                negate, members, i = bracket
                tokens.append(("set", negate, members))
                continue
        i += 1
    return tokens if has_glob else None


_CLASSES: Final[dict[str, Callable[[str], bool]]] = {
    "alpha": str.isalpha, "digit": str.isdigit, "alnum": str.isalnum, "upper": str.isupper,
    "lower": str.islower, "space": str.isspace, "punct": lambda c: c.isprintable()
    and not c.isalnum() and not c.isspace(), "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "blank": lambda c: c in " \t", "print": str.isprintable,
}  # fmt: skip


def _bracket(part: _Part, start: int) -> tuple[bool, str, int] | None:
    """Parse ``[…]`` at ``start``: (negated, members encoded, index after) or None if unclosed.

    Members are encoded as a string of ``c`` (one character), ``a-b`` ranges and ``:name:``
    classes separated by NUL, which cannot occur in a file name.
    """
    i = start + 1
    negate = i < len(part) and part[i][0] in "!^" and not part[i][1]
    if negate:
        i += 1
    members: list[str] = []
    first = True
    while i < len(part):
        char, quoted = part[i]
        if char == "]" and not quoted and not first:
            return negate, "\0".join(members), i + 1
        first = False
        if char == "[" and not quoted and i + 1 < len(part) and part[i + 1][0] == ":":
            end = next(
                (
                    k
                    for k in range(i + 2, len(part) - 1)
                    if part[k][0] == ":" and part[k + 1][0] == "]"
                ),
                None,
            )
            if end is not None:
                name = "".join(c for c, _ in part[i + 2 : end])
                if name not in _CLASSES:
                    raise Denied(
                        f"the glob class `[:{shown(name, 20)}:]` is not one plan mode knows"
                    )
                members.append(f":{name}:")
                i = end + 2
                continue
        if i + 2 < len(part) and part[i + 1] == ("-", False) and part[i + 2][0] != "]":
            members.append(f"{char}-{part[i + 2][0]}")
            i += 3
            continue
        members.append(char)
        i += 1
    return None


def _in_set(member_text: str, char: str) -> bool:
    for member in member_text.split("\0"):
        if len(member) == 1:
            if member == char:
                return True
        elif len(member) == 3 and member[1] == "-":
            if member[0] <= char <= member[2]:
                return True
        elif member.startswith(":") and _CLASSES[member.strip(":")](char):
            return True
    return False


def _one(token: _Token, char: str) -> bool:
    kind = token[0]
    if kind == "lit":
        return token[1] == char
    if kind == "any":
        return True
    assert len(token) == 3
    return _in_set(token[2], char) != token[1]


def _matches(tokens: list[_Token], name: str) -> bool:
    """Wildcard matching in O(len(tokens) * len(name)): backtrack only to the last ``*``."""
    t = n = 0
    star_t, star_n = -1, 0
    while n < len(name):
        if t < len(tokens) and tokens[t][0] != "star" and _one(tokens[t], name[n]):
            t += 1
            n += 1
        elif t < len(tokens) and tokens[t][0] == "star":
            star_t, star_n = t, n
            t += 1
        elif star_t >= 0:
            star_n += 1
            t, n = star_t + 1, star_n
        else:
            return False
    while t < len(tokens) and tokens[t][0] == "star":
        t += 1
    return t == len(tokens)
