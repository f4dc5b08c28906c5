"""What a read-only command *is* once read: argv vectors, redirections, pipes and connectors,
``[[ … ]]`` tests, ``( … )`` subshells, ``if`` clauses and ``while``/``until`` loops whose
parts are all of these.

The filter never hands the model's text to bash. It reads the text once into this structure,
judges the structure, and runs a script rendered from it (``Script.render``) in which every
word is single-quoted, so bash has nothing left to interpret: no expansion, no splitting, no
comment, no glob. What bash executes is the argv the filter judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from plancord.core.shell.readonly.parameters import HOME_VALUE
from plancord.core.shell.readonly.substitution import PIPED_INPUT, is_piped_input

Connector = Literal["&&", "||", ";"]

DEV_NULL: Final = "/dev/null"


def quote(word: str) -> str:
    """``word`` single-quoted for bash, so that bash reads it back as exactly ``word``; a
    process substitution already run becomes a pipe of its quoted output, and a quoted
    ``$HOME`` (``parameters.HOME_VALUE``) stays ``"$HOME"``."""
    if is_piped_input(word):
        return "<(printf '%s' " + quote(word[len(PIPED_INPUT) :]) + ")"
    if HOME_VALUE in word:
        return '"$HOME"'.join(quote(piece) if piece else "" for piece in word.split(HOME_VALUE))
    return "'" + word.replace("'", "'\\''") + "'"


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirection bash may apply: ``fd<path`` (``fd`` 0 or 3 to 9), ``fd>/dev/null``,
    ``fd>&other``, ``fd<&other`` or ``fd<<<text``.

    ``target`` is a path for ``<`` and ``>`` (``/dev/null`` only, for ``>``), a descriptor
    number (or ``-``, closing it) for ``>&`` and ``<&``, and the input's text (a line break
    follows it) for ``<<<``, which is also how a here-document runs.
    """

    fd: int
    op: Literal["<", ">", ">&", "<&", "<<<"]
    target: str

    def render(self) -> str:
        if self.op in (">&", "<&"):
            return f"{self.fd}{self.op}{self.target}"
        return f"{self.fd}{self.op}{quote(self.target)}"


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command: its argv (after expansion) and its redirections, in order."""

    argv: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()

    def render(self) -> str:
        return " ".join(
            [*(quote(word) for word in self.argv), *(r.render() for r in self.redirects)]
        )


@dataclass(frozen=True, slots=True)
class Conditional:
    """``[[ … ]]``, its words already rendered (``conditional.judge_conditional``)."""

    parts: tuple[str, ...]

    def render(self) -> str:
        return "[[ " + " ".join(self.parts) + " ]]"


@dataclass(frozen=True, slots=True)
class Subshell:
    """``( … )``: a list run in a subshell (a ``cd`` inside ends at the ``)``); with
    ``group``, ``{ …; }``, the list run in the shell itself."""

    body: Script
    group: bool = False
    negated: bool = False

    def render(self) -> str:
        if self.group:
            return ("! " if self.negated else "") + "{ " + self.body.render() + "; }"
        return "( " + self.body.render() + " )"


@dataclass(frozen=True, slots=True)
class Pipeline:
    commands: tuple[Command | Conditional | Subshell, ...]

    def render(self) -> str:
        return " | ".join(command.render() for command in self.commands)


@dataclass(frozen=True, slots=True)
class IfClause:
    """``if C; then B; [elif C; then B;]… [else E;] fi``, every list judged."""

    branches: tuple[tuple[Script, Script], ...]
    otherwise: Script | None

    def render(self) -> str:
        parts = []
        for index, (condition, body) in enumerate(self.branches):
            keyword = "elif" if index else "if"
            parts.append(f"{keyword} {condition.render()}; then {body.render()}; ")
        if self.otherwise is not None:
            parts.append(f"else {self.otherwise.render()}; ")
        return "".join(parts) + "fi"


@dataclass(frozen=True, slots=True)
class Repeat:
    """``while C; do B; done`` (or ``until``), both lists judged."""

    until: bool
    condition: Script
    body: Script

    def render(self) -> str:
        keyword = "until" if self.until else "while"
        return f"{keyword} {self.condition.render()}; do {self.body.render()}; done"


@dataclass(frozen=True, slots=True)
class Script:
    """Pipelines (or ``if`` clauses, or loops) run in order; ``connectors[i]`` joins element
    ``i`` to element ``i + 1``."""

    pipelines: tuple[Pipeline | IfClause | Repeat, ...]
    connectors: tuple[Connector, ...] = ()

    def render(self) -> str:
        parts = [self.pipelines[0].render()] if self.pipelines else []
        for connector, pipeline in zip(self.connectors, self.pipelines[1:], strict=True):
            parts.append(f" {connector} " if connector != ";" else "; ")
            parts.append(pipeline.render())
        return "".join(parts)
