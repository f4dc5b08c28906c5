"""``plancord rules list|revoke`` and ``plancord calls``: remembered rules for tool calls and
the reason for each call, from a shell.

A revoke here is read by the bot at its agent's next call (every process reads members'
rules from the store at each call), so it needs no message to the bot.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from plancord.command.plan_commands import OPERATOR_NOTE, _run_operator

if TYPE_CHECKING:
    from plancord.command.operator import OperatorServices


def _cmd_rules_list(args: argparse.Namespace) -> int:
    from plancord.agent.remembered_rules import rules_lines

    async def action(services: OperatorServices) -> str:
        if services.call_rules is None:
            return "Remembered rules are not available."
        if args.agent is not None:
            await services.store.get_agent(args.agent)  # an unknown agent is an error
        lines = await rules_lines(services.call_rules, args.agent)
        return "\n".join(lines) if lines else "No rules."

    return _run_operator(args, action)


def _cmd_rules_revoke(args: argparse.Namespace) -> int:
    from plancord.command.operator import OperatorError
    from plancord.core.planning import Actor

    async def action(services: OperatorServices) -> str:
        if services.call_rules is None:
            raise OperatorError("remembered rules are not available")
        revoked = await services.call_rules.revoke(args.rule, Actor.operator().label)
        if revoked is None:
            raise OperatorError(
                f"there is no member's rule {args.rule!r} in force; plancord rules list shows "
                "them (operator rules are revoked by editing rules.calls in the config)"
            )
        return f"Revoked {revoked.rule.id}: {revoked.rule.describe()}."

    return _run_operator(args, action)


def _cmd_calls(args: argparse.Namespace) -> int:
    from plancord.core.call_records import record_line

    async def action(services: OperatorServices) -> str:
        await services.store.get_agent(args.agent)  # an unknown agent is an error
        if services.call_log is None:
            return "Decision records are not available."
        records = await services.call_log.store.recent(args.agent, args.plan, args.limit)
        return "\n".join(record_line(r) for r in records) if records else "No calls recorded."

    return _run_operator(args, action)


def _limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 10_000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of calls (1 to 10000)")
    return int(text)


def add_rules_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], config_option: dict[str, Any]
) -> None:
    """``rules list|revoke`` and ``calls`` under ``sub``."""
    formatter = argparse.RawDescriptionHelpFormatter
    rules = sub.add_parser(
        "rules",
        help="remembered rules for tool calls (Allow always / Deny always, and the config's)",
        description=OPERATOR_NOTE,
        formatter_class=formatter,
    )
    rules_sub = rules.add_subparsers(dest="rules_cmd", required=True, metavar="ACTION")
    listing = rules_sub.add_parser(
        "list",
        help="list the rules, operator's first",
        description="List the rules for tool calls, the operator's first (they rank over "
        "members'), with who made each, when, and whether it is in force.",
        formatter_class=formatter,
    )
    listing.add_argument("--config", **config_option)
    listing.add_argument("--agent", metavar="NAME", help="only this agent's rules")
    listing.set_defaults(func=_cmd_rules_list)
    revoke = rules_sub.add_parser(
        "revoke",
        help="revoke a member's rule; the next call in every process sees it",
        description="Revoke a member's rule by its id; every process reads rules at each "
        "call, so the agent's next call is decided without it; audited as operator.",
        formatter_class=formatter,
    )
    revoke.add_argument("--config", **config_option)
    revoke.add_argument("rule", help="the rule's id (rules list shows it)")
    revoke.set_defaults(func=_cmd_rules_revoke)

    calls = sub.add_parser(
        "calls",
        help="the reason for each of an agent's tool calls, newest last",
        description="Print what decided each of an agent's tool calls (the gate, the read-only "
        "filter, a rule, the profile, a human, drift), newest last; it reads the bot's "
        "database and changes nothing.",
        formatter_class=formatter,
    )
    calls.add_argument("--config", **config_option)
    calls.add_argument("--agent", required=True, metavar="NAME", help="the agent")
    calls.add_argument("--plan", metavar="ID", help="only the calls of this plan")
    calls.add_argument(
        "--limit", type=_limit, default=50, metavar="N", help="how many (default: 50)"
    )
    calls.set_defaults(func=_cmd_calls)
