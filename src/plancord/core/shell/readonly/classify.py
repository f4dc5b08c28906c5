"""Judge a command line: read it once, expand it, check every command, render what will run.

The steps, each in its own module:

1. ``reading``: the text becomes words, redirections, pipes and connectors, or is refused
   with the construct named (a variable, a substitution, a subshell…); ``loops`` unrolls
   ``for`` loops over their expanded list.
2. ``expansion``: each word becomes the words bash would make of it in the directory it runs
   in (globs expanded, braces refused).
3. ``tables``: each command must be one the filter knows; its rule parses the options as
   the program does and checks operands against ``paths``.
4. ``structure``: the judged argv vectors and redirections become a script in which every
   word is quoted. That script is what runs; the original text never reaches bash.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Final

from plancord.core.sandbox_policy import SANDBOX_PATH
from plancord.core.shell.readonly.commands import Call, Rule, describe
from plancord.core.shell.readonly.conditional import judge_conditional
from plancord.core.shell.readonly.expansion import GlobBudget, expand
from plancord.core.shell.readonly.loops import unroll
from plancord.core.shell.readonly.operator_rules import OperatorRule, find_rule
from plancord.core.shell.readonly.parameters import HOME_VALUE, check_home_shown
from plancord.core.shell.readonly.paths import Place
from plancord.core.shell.readonly.raw import (
    RawCommand,
    RawConditional,
    RawIf,
    RawLoop,
    RawRepeat,
    RawScript,
    RawSubshell,
)
from plancord.core.shell.readonly.reading import read
from plancord.core.shell.readonly.redirects import Descriptors, judge_redirect
from plancord.core.shell.readonly.structure import (
    Command,
    Conditional,
    IfClause,
    Pipeline,
    Repeat,
    Script,
    Subshell,
)
from plancord.core.shell.readonly.substitution import NeedsStage
from plancord.core.shell.readonly.tables import FAMILIES, REFUSED, RULES
from plancord.core.shell.readonly.tables.files import check_cd
from plancord.core.shell.readonly.verdict import Denied, Verdict, shown

MAX_COMMAND_BYTES: Final = 8192
"""Longer commands are refused before reading."""

MAX_WORDS: Final = 1024
"""Commands with more words after expansion are refused."""

MAX_COMMANDS: Final = 128
"""Command lines of more simple commands are refused."""


def classify(
    command: object,
    workspace: Path | str | None = None,
    rules: Sequence[OperatorRule] = (),
    outputs: Mapping[str, str] | None = None,
) -> Verdict:
    """Judge ``command`` as run from ``workspace`` (the current directory when None), with
    the operator's ``rules`` deciding the commands they name.

    ``outputs`` holds the output of each command substitution already run, by its inner
    text. When one has not run and its inner command is read-only, the verdict is a denial
    whose ``stage`` is the script to run first (read-only) before judging again.

    Never raises: an internal failure denies.
    """
    try:
        return _classify(command, workspace, rules, outputs or {})
    except NeedsStage as needed:
        return _stage(needed, workspace, rules)
    except Denied as denial:
        return Verdict(False, denial.reason, decided_by=denial.decided_by)
    except Exception as exc:
        return Verdict(
            False, f"the command could not be checked ({type(exc).__name__}), so it is denied"
        )


def _stage(
    needed: NeedsStage, workspace: Path | str | None, rules: Sequence[OperatorRule]
) -> Verdict:
    """The verdict asking for the inner command to run first, or the denial saying why it
    may not."""
    inner, kind = needed.inner, needed.kind
    try:
        judged = _classify(inner, workspace, rules, {})
    except NeedsStage:
        return Verdict(False, f"a substitution inside a {kind} is not evaluated")
    except Denied as denial:
        return Verdict(
            False,
            f"the {kind} `{shown(inner)}` is not read-only: {denial.reason}",
            decided_by=denial.decided_by,
        )
    reason = f"the {kind} `{shown(inner)}` runs first"
    return Verdict(
        False, reason, decided_by=judged.decided_by, stage=judged.script, stage_key=inner
    )


def _classify(
    command: object,
    workspace: Path | str | None,
    rules: Sequence[OperatorRule],
    outputs: Mapping[str, str],
) -> Verdict:
    if not isinstance(command, str):
        raise Denied("the command is not text")
    if len(command.encode("utf-8", "surrogatepass")) > MAX_COMMAND_BYTES:
        raise Denied(f"the command is longer than {MAX_COMMAND_BYTES} bytes")
    control = next((c for c in command if (c < " " and c not in "\t\n") or c == "\x7f"), None)
    if control is not None:
        raise Denied(f"the command holds a control character ({control!r})")
    place = Place.at(workspace if workspace is not None else os.getcwd())
    raw = read(command, outputs, str(place.cwd))
    judging = _Judging(rules, bool(outputs), raw.uses_pwd)
    script = judging.script(raw, place, cd_allowed=True)
    reason = "read-only: " + ", ".join(dict.fromkeys(judging.names))
    return Verdict(
        True,
        reason,
        judging.descriptors.prelude() + script.render(),
        tuple(judging.decided),
        operator_rules=tuple(dict.fromkeys(judging.operator_rules)),
        constructs=raw.constructs + _outside_construct(place),
        outside_view=tuple(place.outside.paths),
    )


def _outside_construct(place: Place) -> tuple[str, ...]:
    if not place.outside.paths:
        return ()
    return (
        "a read outside the workspace: judged by what the read-only sandbox shows there, "
        "nothing (paths); it runs only where a sandbox layer hides the host",
    )


class _Judging:
    """One command line being judged: its rules, and what the parts judged so far add up to."""

    def __init__(self, rules: Sequence[OperatorRule], staged: bool, uses_pwd: bool) -> None:
        self.rules = rules
        self.staged = staged
        self.uses_pwd = uses_pwd
        self.budget = GlobBudget()
        self.descriptors = Descriptors()
        self.names: list[str] = []
        self.decided: list[str] = []
        self.operator_rules: list[str] = []
        self.commands = 0
        self.words = 0

    def script(self, raw: RawScript, place: Place, *, cd_allowed: bool) -> Script:
        """``raw`` (one list) judged as run from ``place``; ``cd DIR && …`` moves the rest
        of this list only, and only where ``cd_allowed`` (the whole line or a subshell)."""
        flat = unroll(raw, place.shown_cwd, self.budget)
        elements: list[Pipeline | IfClause | Repeat] = []
        for index, element in enumerate(flat.pipelines):
            if isinstance(element, RawIf):
                elements.append(self._if(element, place))
                continue
            if isinstance(element, RawRepeat):
                condition = self.script(element.condition, place, cd_allowed=False)
                body = self.script(element.body, place, cd_allowed=False)
                elements.append(Repeat(element.until, condition, body))
                continue
            if isinstance(element, RawLoop):  # unroll() leaves none; if one is left, refuse
                raise Denied("a loop could not be unrolled into its rounds")
            commands: list[Command | Conditional | Subshell] = []
            for part in element:
                if isinstance(part, RawConditional):
                    if any(not isinstance(t, str) and HOME_VALUE in t.text for t in part.tokens):
                        raise Denied("`$HOME` inside `[[ … ]]` is not evaluated")
                    commands.append(judge_conditional(part, place))
                    self._judged("[[", f"[[: {describe(judge_conditional)}")
                elif isinstance(part, RawSubshell):
                    body = self.script(part.body, place, cd_allowed=not part.group)
                    commands.append(Subshell(body, part.group, part.negated))
                elif part.words and part.words[0].source == "cd":
                    if (
                        not cd_allowed
                        or len(element) > 1
                        or any(c != "&&" for c in flat.connectors[index:])
                    ):
                        raise Denied(
                            "`cd` is allowed only as `cd DIR && …` (on the whole line or in a "
                            "subshell), so every later command runs where the filter expects"
                        )
                    command = self._command(part, place, ())
                    place = place.moved_to(place.resolve(command.argv[1]))
                    commands.append(command)
                else:
                    feeders = tuple(c.argv for c in commands if isinstance(c, Command))
                    if len(feeders) != len(commands):
                        feeders = (("(",),)  # a subshell's or test's output: not a path list
                    commands.append(self._command(part, place, feeders))
            elements.append(Pipeline(tuple(commands)))
        return Script(tuple(elements), tuple(flat.connectors))  # type: ignore[arg-type]

    def _if(self, clause: RawIf, place: Place) -> IfClause:
        branches = tuple(
            (self.script(c, place, cd_allowed=False), self.script(b, place, cd_allowed=False))
            for c, b in clause.branches
        )
        otherwise = clause.otherwise
        return IfClause(
            branches, None if otherwise is None else self.script(otherwise, place, cd_allowed=False)
        )

    def _judged(self, name: str, decided: str) -> None:
        self.commands += 1
        if self.commands > MAX_COMMANDS:
            raise Denied(f"the command line runs more than {MAX_COMMANDS} commands")
        self.names.append(name)
        self.decided.append(decided)

    def _command(
        self, raw: RawCommand, place: Place, feeders: tuple[tuple[str, ...], ...]
    ) -> Command:
        argv = [w for word in raw.words for w in expand(word, place.shown_cwd, self.budget)]
        self.words += len(argv)
        if self.words > MAX_WORDS:
            raise Denied(f"the command has more than {MAX_WORDS} words")
        opened: set[int] = set()
        redirects = [
            r
            for raw_redirect in raw.redirects
            for r in judge_redirect(raw_redirect, place, self.descriptors, opened)
        ]
        piped = not any(r.fd == 0 and r.op in ("<", "<<<", "<&") for r in redirects)
        call = Call(argv[0], argv[1:], place, feeders if piped else ())
        if argv[0] == "cd":
            if self.staged:
                raise Denied(
                    "`cd` in a command line with a command substitution is not evaluated "
                    "(the substitution runs in the workspace)"
                )
            if self.uses_pwd:
                raise Denied(
                    "`cd` in a command line that reads `$PWD`, `$OLDPWD` or `~+` is not evaluated"
                )
            check_cd(call)
            self._judged("cd", f"cd: {describe(check_cd)}")
        elif argv == ["exec"]:
            self.descriptors.hold(redirects)
            self._judged("exec", "exec: descriptors held open for reading (redirects)")
        else:
            check_home_shown(argv)
            decided, operator = _check_command(call, argv, self.rules)
            if operator is not None:
                self.operator_rules.append(operator.command)
            self._judged(argv[0], decided)
        return Command(tuple(argv), tuple(redirects))


SYSTEM_PROGRAM_DIRS: Final = frozenset(SANDBOX_PATH.split(":"))
"""Where a program named by its absolute path is the system's own (read-only in every
sandbox), judged as its name is: the directories of the sandbox's ``PATH``."""

PATH_SPECIAL: Final = frozenset({"cd"})
"""Names the filter judges as the shell does them, never as a program by its path."""


def system_program(path: str) -> str:
    """The name a program given by ``path`` is judged as: ``/usr/bin/ls`` is ``ls``. Only a
    normal absolute path into a system program directory; anything else (``./ls``,
    ``/tmp/ls``, ``/usr/bin/../../tmp/ls``, a folder of the workspace) is refused."""
    folder, _, base = path.rpartition("/")
    if folder not in SYSTEM_PROGRAM_DIRS or not base or base in PATH_SPECIAL:
        raise Denied(
            f"`{shown(path)}` runs a program by its path outside the system's program "
            "folders; plan mode runs only known commands",
            f"{shown(path)}: a program named by its path",
        )
    return base


def _check_command(
    call: Call, argv: list[str], rules: Sequence[OperatorRule]
) -> tuple[str, OperatorRule | None]:
    """Judge one command; returns which rule decided, and the operator's rule when it was
    one (raises ``Denied`` carrying the rule)."""
    name = call.program
    operator = find_rule(rules, argv)
    if operator is not None:
        _judge(operator.judge, call, f"{name}: {operator.label}")
        return f"{name}: {operator.label}", operator
    if "/" in name:
        name = system_program(name)
        call = replace(call, program=name)
    rule = RULES.get(name)
    if rule is None:
        reason = REFUSED.get(name)
        if reason is not None:
            raise Denied(reason, f"{shown(name)}: the list of refused commands")
        raise Denied(
            f"`{shown(name)}` is not a command plan mode knows to be read-only",
            f"{shown(name)}: no rule (unknown commands are refused)",
        )
    decided = f"{name} [{FAMILIES[name]}]: {describe(rule)}"
    _judge(rule, call, decided)
    return decided, None


def _judge(rule: Rule, call: Call, decided: str) -> None:
    try:
        rule(call)
    except Denied as denial:
        raise Denied(denial.reason, *(denial.decided_by or (decided,))) from None
