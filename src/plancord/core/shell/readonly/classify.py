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
from pathlib import Path
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, describe
from plancord.core.shell.readonly.expansion import GlobBudget, check_braces, expand, is_glob
from plancord.core.shell.readonly.loops import unroll
from plancord.core.shell.readonly.operator_rules import OperatorRule, find_rule
from plancord.core.shell.readonly.paths import Place, check_path
from plancord.core.shell.readonly.raw import RawRedirect
from plancord.core.shell.readonly.reading import read
from plancord.core.shell.readonly.structure import (
    DEV_NULL,
    Command,
    Pipeline,
    Redirect,
    Script,
)
from plancord.core.shell.readonly.substitution import NeedsStage
from plancord.core.shell.readonly.tables import REFUSED, RULES
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
    budget = GlobBudget()
    raw = unroll(read(command, outputs), place.cwd, budget)
    if sum(len(pipeline) for pipeline in raw.pipelines) > MAX_COMMANDS:
        raise Denied(f"the command line runs more than {MAX_COMMANDS} commands")
    pipelines: list[Pipeline] = []
    names: list[str] = []
    decided: list[str] = []
    words = 0
    for index, raw_pipeline in enumerate(raw.pipelines):
        commands: list[Command] = []
        for raw_command in raw_pipeline:
            argv = [w for word in raw_command.words for w in expand(word, place.cwd, budget)]
            words += len(argv)
            if words > MAX_WORDS:
                raise Denied(f"the command has more than {MAX_WORDS} words")
            redirects = [
                r for raw_redirect in raw_command.redirects for r in _redirect(raw_redirect, place)
            ]
            name = argv[0]
            piped = not any(r.op == "<" for r in redirects)
            feeders = tuple(c.argv for c in commands) if piped else ()
            call = Call(name, argv[1:], place, feeders)
            if name == "cd":
                if outputs:
                    raise Denied(
                        "`cd` in a command line with a command substitution is not evaluated "
                        "(the substitution runs in the workspace)"
                    )
                if len(raw_pipeline) > 1 or any(c != "&&" for c in raw.connectors[index:]):
                    raise Denied(
                        "`cd` is allowed only as `cd DIR && …`, so every later command runs "
                        "where the filter expects"
                    )
                place = Place(place.workspace, Path(place.resolve(check_cd(call))))
                decided.append(f"cd: {describe(check_cd)}")
            else:
                decided.append(_check_command(call, argv, rules))
            commands.append(Command(tuple(argv), tuple(redirects)))
            names.append(name)
        pipelines.append(Pipeline(tuple(commands)))
    script = Script(tuple(pipelines), tuple(raw.connectors))  # type: ignore[arg-type]
    reason = "read-only: " + ", ".join(dict.fromkeys(names))
    return Verdict(True, reason, script.render(), tuple(decided))


def _check_command(call: Call, argv: list[str], rules: Sequence[OperatorRule]) -> str:
    """Judge one command; returns which rule decided (raises ``Denied`` carrying it)."""
    name = call.program
    operator = find_rule(rules, argv)
    if operator is not None:
        _judge(operator.judge, call, f"{name}: {operator.label}")
        return f"{name}: {operator.label}"
    if "/" in name:
        raise Denied(
            f"`{shown(name)}` runs a program by its path; plan mode runs only known commands",
            f"{shown(name)}: a program named by its path",
        )
    rule = RULES.get(name)
    if rule is None:
        reason = REFUSED.get(name)
        if reason is not None:
            raise Denied(reason, f"{shown(name)}: the list of refused commands")
        raise Denied(
            f"`{shown(name)}` is not a command plan mode knows to be read-only",
            f"{shown(name)}: no rule (unknown commands are refused)",
        )
    decided = f"{name}: {describe(rule)}"
    _judge(rule, call, decided)
    return decided


def _judge(rule: Rule, call: Call, decided: str) -> None:
    try:
        rule(call)
    except Denied as denial:
        raise Denied(denial.reason, *(denial.decided_by or (decided,))) from None


def _redirect(raw: RawRedirect, place: Place) -> list[Redirect]:
    target = raw.target
    check_braces(target)
    if is_glob(target):
        raise Denied(f"the redirection target `{shown(target.source)}` is a glob")
    text, op, fd = target.text, raw.op, raw.fd
    if op == "<":
        if fd not in (None, 0):
            raise Denied("only standard input may be redirected from a file")
        check_path(place, text)
        return [Redirect(0, "<", text)]
    if op == ">&" and text in ("1", "2"):
        fd = 1 if fd is None else fd
        if fd not in (1, 2):
            raise Denied(f"`{fd}>&{text}`: only standard output and error may be redirected")
        return [Redirect(fd, ">&", text)]
    if op == ">&" and fd is not None:
        raise Denied(f"`{fd}>&{shown(text)}` is not a descriptor plan mode knows")
    if text != DEV_NULL:
        raise Denied(
            f"the redirection `{op}{shown(text)}` writes to a file; plan mode only writes "
            "to /dev/null"
        )
    if op in ("&>", "&>>", ">&"):
        return [Redirect(1, ">", DEV_NULL), Redirect(2, ">&", "1")]
    fd = 1 if fd is None else fd
    if fd not in (1, 2):
        raise Denied(f"`{fd}>`: only standard output and error may be redirected")
    return [Redirect(fd, ">", DEV_NULL)]
