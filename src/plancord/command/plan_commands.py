"""``plancord plan …``, ``plancord agents …``, ``plancord asks …`` and ``plancord schedules
…``: the operator's commands on the bot's database, for admins and scripts when Discord is
not at hand."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from plancord.command.result_diff import add_result_diff, cmd_result_diff

if TYPE_CHECKING:
    from plancord.command.operator import OperatorServices

#: ``plancord.core.planning.ApprovalMode`` values, spelt out so building the parser stays cheap.
APPROVAL_MODES = ("normal", "fresh_context", "confirm_each_edit")

OPERATOR_NOTE = """\
These commands work on the bot's database directly, for admins and scripts when Discord is
not at hand; every decision is audited with the actor "operator". Give the same --config as
the running bot.

A running bot is a separate process: it sees an operator's decision only when it next reads
the agent's state (its next turn, a button click, a deadline). The bot resumes an agent
waiting for approval only when the approval happens in the bot's own process, so after
`plancord plan approve` the agent continues on its next turn: post a message in its channel.
"""


def _run_operator(
    args: argparse.Namespace, action: Callable[[OperatorServices], Awaitable[str]]
) -> int:
    """Load the config (exit 2 on error), run ``action`` on the services, print its text.

    Every ``PlancordError`` becomes one line ``plancord: <message>`` on stderr and exit 1; an
    unknown agent's line points to ``plancord agents list``.
    """
    from plancord.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    from plancord.command.operator import open_services
    from plancord.core.errors import AgentNotFound, PlancordError

    async def run() -> str:
        async with open_services(config) as services:
            return await action(services)

    try:
        text = asyncio.run(run())
    except AgentNotFound as exc:
        print(
            f"plancord: there is no agent named {exc.agent!r}; plancord agents list shows them",
            file=sys.stderr,
        )
        return 1
    except PlancordError as exc:
        print(f"plancord: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(text)
    return 0


def _cmd_plan_status(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_status, status_json, status_text
    from plancord.command.operator_results import waiting_json, waiting_line, waiting_result

    async def action(services: OperatorServices) -> str:
        waiting = await waiting_result(services, args.agent)
        status = await plan_status(services, args.agent)
        if args.json:
            found = {**status_json(status), "result": waiting_json(waiting)}
            return json.dumps(found, ensure_ascii=False)
        text = status_text(status)
        return text if waiting is None else f"{text}\n{waiting_line(waiting)}"

    return _run_operator(args, action)


def _cmd_plan_enter(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_enter

    async def action(services: OperatorServices) -> str:
        return await plan_enter(services, args.agent, args.task, args.reason)

    return _run_operator(args, action)


def _cmd_plan_approve(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_approve
    from plancord.core.planning import ApprovalMode

    async def action(services: OperatorServices) -> str:
        return await plan_approve(
            services,
            args.agent,
            args.revision,
            ApprovalMode(args.mode),
            acknowledged_blockers=args.despite_blockers,
        )

    return _run_operator(args, action)


def _cmd_plan_reject(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_reject

    async def action(services: OperatorServices) -> str:
        return await plan_reject(services, args.agent, args.revision, args.reason)

    return _run_operator(args, action)


def _cmd_plan_edit(args: argparse.Namespace) -> int:
    from pathlib import Path

    from plancord.command.operator import plan_edit

    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"plancord: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1

    async def action(services: OperatorServices) -> str:
        return await plan_edit(services, args.agent, args.file, text)

    return _run_operator(args, action)


def _cmd_plan_comment(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_comment

    async def action(services: OperatorServices) -> str:
        return await plan_comment(services, args.agent, args.step, " ".join(args.text))

    return _run_operator(args, action)


def _cmd_plan_diff(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_diff

    async def action(services: OperatorServices) -> str:
        return await plan_diff(services, args.agent, args.first, args.second)

    return _run_operator(args, action)


def _cmd_plan_cancel(args: argparse.Namespace) -> int:
    from plancord.command.operator import plan_cancel

    async def action(services: OperatorServices) -> str:
        return await plan_cancel(services, args.agent, args.reason)

    return _run_operator(args, action)


def _cmd_plan_result(args: argparse.Namespace) -> int:
    from plancord.command.operator_results import result_summary, result_text

    async def action(services: OperatorServices) -> str:
        return result_text(await result_summary(services, args.agent))

    return _run_operator(args, action)


def _cmd_plan_merge(args: argparse.Namespace) -> int:
    from plancord.command.operator_results import result_merge

    async def action(services: OperatorServices) -> str:
        return await result_merge(services, args.agent)

    return _run_operator(args, action)


def _cmd_plan_discard(args: argparse.Namespace) -> int:
    from plancord.command.operator_results import result_discard

    async def action(services: OperatorServices) -> str:
        return await result_discard(services, args.agent)

    return _run_operator(args, action)


def _cmd_agents_list(args: argparse.Namespace) -> int:
    from plancord.command.operator import agents_json, agents_text, list_agents

    async def action(services: OperatorServices) -> str:
        rows = await list_agents(services)
        if args.json:
            return json.dumps(agents_json(rows), ensure_ascii=False)
        return agents_text(rows)

    return _run_operator(args, action)


def _cmd_schedules_list(args: argparse.Namespace) -> int:
    from plancord.command.operator import schedules_json, schedules_text

    async def action(services: OperatorServices) -> str:
        found = await services.schedules.list(args.agent)
        if args.json:
            return json.dumps(schedules_json(found), ensure_ascii=False)
        return schedules_text(found)

    return _run_operator(args, action)


def _cmd_schedule_change(args: argparse.Namespace) -> int:
    from plancord.command.operator import schedule_change

    async def action(services: OperatorServices) -> str:
        return await schedule_change(services, args.schedules_cmd, args.schedule)

    return _run_operator(args, action)


def _cmd_asks_list(args: argparse.Namespace) -> int:
    from plancord.command.operator_asks import asks_json, asks_list, asks_text

    async def action(services: OperatorServices) -> str:
        asks = await asks_list(services, args.agent)
        return json.dumps(asks_json(asks), indent=2) if args.json else asks_text(asks)

    return _run_operator(args, action)


def _cmd_asks_answer(args: argparse.Namespace) -> int:
    from plancord.command.operator_asks import asks_answer

    async def action(services: OperatorServices) -> str:
        return await asks_answer(services, args.ask, " ".join(args.choice), args.as_name)

    return _run_operator(args, action)


def _blockers(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of blockers (1 or more)")
    return int(text)


def _revision(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a revision number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("revisions are numbered from 1")
    return value


def add_operator_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], config_option: dict[str, Any]
) -> None:
    """``plan …`` and ``agents …`` under ``sub``; ``config_option`` is how each takes
    ``--config`` (the keyword arguments of ``add_argument``)."""
    formatter = argparse.RawDescriptionHelpFormatter

    def command(
        group: argparse._SubParsersAction[argparse.ArgumentParser],
        name: str,
        help_text: str,
        func: Callable[[argparse.Namespace], int],
        *,
        agent: bool = True,
    ) -> argparse.ArgumentParser:
        parser = group.add_parser(
            name,
            help=help_text,
            # The note is said once, on the group's help (plancord plan -h), not on each.
            description=f"{help_text}.",
            formatter_class=formatter,
        )
        parser.add_argument("--config", **config_option)
        if agent:
            parser.add_argument("--agent", required=True, metavar="NAME", help="the agent")
        parser.set_defaults(func=func)
        return parser

    plan = sub.add_parser(
        "plan",
        help="operator commands for an agent's plan mode",
        description=OPERATOR_NOTE,
        formatter_class=formatter,
    )
    plan.add_argument("--config", **config_option)  # plancord plan --config X status
    plan_sub = plan.add_subparsers(dest="plan_cmd", required=True, metavar="ACTION")

    status = command(
        plan_sub, "status", "show an agent's phase and its current plan", _cmd_plan_status
    )
    status.add_argument("--json", action="store_true", help="print one JSON object")

    enter = command(plan_sub, "enter", "put an agent into plan mode", _cmd_plan_enter)
    enter.add_argument("--task", help="what the plan is for")
    enter.add_argument("--reason", help="why plan mode was entered (audited)")

    approve = command(
        plan_sub,
        "approve",
        "approve the agent's submitted plan: the current revision, or exactly --revision",
        _cmd_plan_approve,
    )
    approve.add_argument(
        "--revision",
        type=_revision,
        metavar="N",
        help="approve only revision N; refused when a newer revision replaced it",
    )
    approve.add_argument(
        "--mode",
        choices=APPROVAL_MODES,
        default=APPROVAL_MODES[0],
        help="how the approved plan is executed (default: normal)",
    )
    approve.add_argument(
        "--despite-blockers",
        type=_blockers,
        metavar="N",
        help="approve although the plan's review found N blockers (plan_mode.review: "
        "require_acknowledgement asks for this confirmation; audited)",
    )

    reject = command(
        plan_sub,
        "reject",
        "reject the agent's submitted plan; planning ends and nothing is executed",
        _cmd_plan_reject,
    )
    reject.add_argument("--revision", type=_revision, metavar="N", help="reject only revision N")
    reject.add_argument("--reason", help="why (audited)")

    edit = command(
        plan_sub,
        "edit",
        "edit the agent's waiting plan: PLAN.md (its file, edited) becomes the next revision, "
        "authored by the operator",
        _cmd_plan_edit,
    )
    edit.add_argument("--file", required=True, metavar="PLAN.md", help="the edited plan file")

    comment = command(
        plan_sub,
        "comment",
        "comment on a step of the agent's waiting plan (the agent reads it at its next turn)",
        _cmd_plan_comment,
    )
    comment.add_argument(
        "--step", type=int, default=0, metavar="N", help="the step (default: the whole plan)"
    )
    comment.add_argument("text", nargs="+", help="the comment")

    diff = command(
        plan_sub,
        "diff",
        "what changed between two revisions of the agent's plan (default: the last two)",
        _cmd_plan_diff,
    )
    diff.add_argument("first", nargs="?", type=_revision, help="the older revision")
    diff.add_argument("second", nargs="?", type=_revision, help="the newer revision")

    cancel = command(
        plan_sub, "cancel", "leave plan mode (gathering, submitted or executing)", _cmd_plan_cancel
    )
    cancel.add_argument("--reason", help="why (audited)")

    add_result_diff(
        command(
            plan_sub,
            "result-diff",
            "print the whole diff of the agent's newest executed plan (its branch)",
            cmd_result_diff,
        )
    )

    command(
        plan_sub,
        "result",
        "show the agent's result waiting for Merge or Discard (else its newest) as the "
        "completion card shows it",
        _cmd_plan_result,
    )
    command(
        plan_sub,
        "merge",
        "merge the agent's waiting result onto its base branch, as the card's Merge does",
        _cmd_plan_merge,
    )
    command(
        plan_sub,
        "discard",
        "discard the agent's waiting result: the base branch and the workspace go back to "
        "the reviewed state, as the card's Discard does",
        _cmd_plan_discard,
    )

    def commands_of(
        name: str, help_text: str
    ) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        parser = sub.add_parser(
            name, help=help_text, description=OPERATOR_NOTE, formatter_class=formatter
        )
        parser.add_argument("--config", **config_option)  # plancord agents --config X list
        return parser.add_subparsers(dest=f"{name}_cmd", required=True, metavar="ACTION")

    agents_sub = commands_of("agents", "operator commands for agents")
    listing = command(
        agents_sub,
        "list",
        "list agents: name, channel, model, phase",
        _cmd_agents_list,
        agent=False,
    )
    listing.add_argument("--json", action="store_true", help="print one JSON array")

    asks_sub = commands_of("asks", "operator commands for what agents wait on a human for")
    waiting = command(
        asks_sub,
        "list",
        "list the asks waiting for an answer: id, agent, what is asked, until when",
        _cmd_asks_list,
        agent=False,
    )
    waiting.add_argument("--agent", metavar="NAME", help="only this agent's asks")
    waiting.add_argument("--json", action="store_true", help="print one JSON array")
    answer = command(
        asks_sub,
        "answer",
        "answer an ask as the operator: allow|deny (a permission, drift or network ask), "
        "continue|stop (a checkpoint), or a question's answer (a choice's text or number, "
        "or words)",
        _cmd_asks_answer,
        agent=False,
    )
    answer.add_argument("ask", metavar="ID", help="the ask's id (plancord asks list)")
    answer.add_argument("choice", nargs="+", metavar="CHOICE", help="the answer")
    answer.add_argument(
        "--as",
        dest="as_name",
        metavar="MEMBER",
        help="who answers at the shell, named in the outcome (the actor is the operator)",
    )

    schedules_sub = commands_of("schedules", "operator commands for scheduled plans")
    every = command(
        schedules_sub,
        "list",
        "list schedules: id, agent, state, next run, when, task",
        _cmd_schedules_list,
        agent=False,
    )
    every.add_argument("--agent", metavar="NAME", help="only this agent's schedules")
    every.add_argument("--json", action="store_true", help="print one JSON array")
    for name, text in (
        ("pause", "pause a schedule: no runs until it is resumed"),
        ("resume", "resume a paused schedule from now on"),
        ("delete", "delete a schedule (its runs stay in the audit log)"),
    ):
        change = command(schedules_sub, name, text, _cmd_schedule_change, agent=False)
        change.add_argument("schedule", metavar="ID", help="the schedule's id")
