"""The ``plancord`` command: run the bot, migrate, classify shell commands, sandbox, doctor,
demo."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import plancord

if TYPE_CHECKING:
    from plancord.operator import OperatorServices

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


def _cmd_check_bash(args: argparse.Namespace) -> int:
    """Judge commands as run in ``--workspace``; exit 1 when any is denied."""
    from plancord.core.shell.readonly import classify

    commands: list[str] = (
        [args.command] if args.command is not None else sys.stdin.read().splitlines()
    )
    denied = False
    for command in commands:
        if args.command is None and not command.strip():
            continue
        verdict = classify(command, args.workspace)
        denied = denied or not verdict.allowed
        if args.json:
            record = {
                "command": command,
                "allowed": verdict.allowed,
                "reason": verdict.reason,
                "runs": verdict.script,
            }
            print(json.dumps(record, ensure_ascii=False))
        else:
            word = "allowed" if verdict.allowed else "denied"
            print(f"{word}: {verdict.reason}")
            if verdict.script is not None:
                print(f"  runs: {verdict.script}")
    return 1 if denied else 0


def _cmd_sandbox_run(args: argparse.Namespace) -> int:
    from plancord.core.shell.sandbox import sandbox_run

    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("plancord sandbox-run: give a command after --", file=sys.stderr)
        return 2
    return sandbox_run(Path(args.workspace), argv)


def _cmd_migrate(args: argparse.Namespace) -> int:
    from plancord.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    from plancord.core.errors import PlancordError
    from plancord.storage.db import migrate_file

    try:
        before, after = asyncio.run(migrate_file(config.database_path))
    except PlancordError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    if before == after:
        print(f"database {config.database_path} is up to date (version {after})")
    else:
        print(f"database {config.database_path} migrated from version {before} to {after}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from plancord.config import ConfigError, Secrets, load_config
    from plancord.hardening import harden

    try:
        config = load_config(args.config)
        secrets = Secrets.from_env()
        secrets.require()
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    from plancord.core.errors import PlancordError
    from plancord.startup import data_dir_fix, data_dir_problem

    problem = data_dir_problem(config)
    if problem is not None:
        print(
            f"plancord: cannot use the data directory {config.data_dir}: {problem}; "
            f"{data_dir_fix(problem)}",
            file=sys.stderr,
        )
        return 2
    harden(Secrets.environment_names())
    configure_logging(config.log_level)
    from plancord.discord_bot.bot import PlancordBot
    from plancord.llm.anthropic_client import AnthropicModelClient

    token = secrets.discord_token.get_secret_value() if secrets.discord_token else ""
    api_key = secrets.anthropic_api_key.get_secret_value() if secrets.anthropic_api_key else ""
    bot = PlancordBot(
        config,
        model_factory=lambda: AnthropicModelClient(
            api_key=api_key,
            base_url=config.anthropic.base_url,
            max_retries=config.anthropic.max_retries,
            timeout_seconds=config.anthropic.timeout_seconds,
            max_concurrent_requests=config.anthropic.max_concurrent_requests,
        ),
        handle_signals=True,
    )
    import discord

    try:
        bot.run(token, log_handler=None)
    except discord.LoginFailure:
        print("plancord: Discord refused DISCORD_TOKEN; check the token", file=sys.stderr)
        return 2
    except discord.PrivilegedIntentsRequired:
        print(
            "plancord: enable the Message Content intent for this bot in the Discord "
            "developer portal",
            file=sys.stderr,
        )
        return 2
    except (OSError, discord.GatewayNotFound, discord.ConnectionClosed) as exc:
        print(
            f"plancord: cannot reach Discord ({type(exc).__name__}: {exc}); check the "
            "network, a proxy or firewall, and https://discordstatus.com",
            file=sys.stderr,
        )
        return 1
    except PlancordError as exc:
        print(f"plancord: could not start: {exc}", file=sys.stderr)
        return 1
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    from plancord.doctor import run_doctor

    return run_doctor(args.config)


def _cmd_demo(args: argparse.Namespace) -> int:
    from plancord.demo import run_demo

    return run_demo()


def _run_operator(
    args: argparse.Namespace, action: Callable[[OperatorServices], Awaitable[str]]
) -> int:
    """Load the config (exit 2 on error), run ``action`` on the services, print its text.

    Every ``PlancordError`` becomes one line ``plancord: <message>`` on stderr and exit 1.
    """
    from plancord.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    from plancord.core.errors import PlancordError
    from plancord.operator import open_services

    async def run() -> str:
        async with open_services(config) as services:
            return await action(services)

    try:
        text = asyncio.run(run())
    except PlancordError as exc:
        print(f"plancord: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    print(text)
    return 0


def _cmd_plan_status(args: argparse.Namespace) -> int:
    from plancord.operator import plan_status, status_json, status_text

    async def action(services: OperatorServices) -> str:
        status = await plan_status(services, args.agent)
        if args.json:
            return json.dumps(status_json(status), ensure_ascii=False)
        return status_text(status)

    return _run_operator(args, action)


def _cmd_plan_enter(args: argparse.Namespace) -> int:
    from plancord.operator import plan_enter

    async def action(services: OperatorServices) -> str:
        return await plan_enter(services, args.agent, args.task, args.reason)

    return _run_operator(args, action)


def _cmd_plan_approve(args: argparse.Namespace) -> int:
    from plancord.core.planning import ApprovalMode
    from plancord.operator import plan_approve

    async def action(services: OperatorServices) -> str:
        return await plan_approve(services, args.agent, args.revision, ApprovalMode(args.mode))

    return _run_operator(args, action)


def _cmd_plan_reject(args: argparse.Namespace) -> int:
    from plancord.operator import plan_reject

    async def action(services: OperatorServices) -> str:
        return await plan_reject(services, args.agent, args.revision, args.reason)

    return _run_operator(args, action)


def _cmd_plan_diff(args: argparse.Namespace) -> int:
    from plancord.operator import plan_diff

    async def action(services: OperatorServices) -> str:
        return await plan_diff(services, args.agent, args.first, args.second)

    return _run_operator(args, action)


def _cmd_plan_cancel(args: argparse.Namespace) -> int:
    from plancord.operator import plan_cancel

    async def action(services: OperatorServices) -> str:
        return await plan_cancel(services, args.agent, args.reason)

    return _run_operator(args, action)


def _cmd_agents_list(args: argparse.Namespace) -> int:
    from plancord.operator import agents_json, agents_text, list_agents

    async def action(services: OperatorServices) -> str:
        rows = await list_agents(services)
        if args.json:
            return json.dumps(agents_json(rows), ensure_ascii=False)
        return agents_text(rows)

    return _run_operator(args, action)


def _revision(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a revision number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("revisions are numbered from 1")
    return value


def _add_operator_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], config_help: str
) -> None:
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
            description=f"{help_text}.\n\n{OPERATOR_NOTE}",
            formatter_class=formatter,
        )
        parser.add_argument("--config", type=Path, default=None, help=config_help)
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

    reject = command(
        plan_sub,
        "reject",
        "reject the agent's submitted plan; planning ends and nothing is executed",
        _cmd_plan_reject,
    )
    reject.add_argument("--revision", type=_revision, metavar="N", help="reject only revision N")
    reject.add_argument("--reason", help="why (audited)")

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

    agents = sub.add_parser(
        "agents",
        help="operator commands for agents",
        description=OPERATOR_NOTE,
        formatter_class=formatter,
    )
    agents_sub = agents.add_subparsers(dest="agents_cmd", required=True, metavar="ACTION")
    listing = command(
        agents_sub,
        "list",
        "list agents: name, channel, model, phase",
        _cmd_agents_list,
        agent=False,
    )
    listing.add_argument("--json", action="store_true", help="print one JSON array")


def configure_logging(level: str) -> None:
    """Everything to stderr, one line per record; the ``[plan-mode]`` lines are among them."""
    import logging

    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def installed_version() -> str:
    """The installed distribution's version, else the package's own."""
    try:
        return importlib.metadata.version("plancord")
    except importlib.metadata.PackageNotFoundError:
        return plancord.__version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plancord", description="AI coding agents on Discord that plan before they act."
    )
    parser.add_argument("--version", action="version", version=f"plancord {installed_version()}")
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    config_help = "YAML config file (default: ./config.yaml when it exists, else built-in defaults)"

    run = sub.add_parser("run", help="run the Discord bot")
    run.add_argument("--config", type=Path, default=None, help=config_help)
    run.set_defaults(func=_cmd_run)

    migrate = sub.add_parser("migrate", help="create or upgrade the database")
    migrate.add_argument("--config", type=Path, default=None, help=config_help)
    migrate.set_defaults(func=_cmd_migrate)

    check = sub.add_parser(
        "check-bash",
        help="classify shell commands as read-only (allowed) or not (denied); exit 1 if any "
        "is denied",
    )
    check.add_argument("command", nargs="?", help="one command; without it, one per line on stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object per command")
    check.add_argument(
        "--workspace",
        default=".",
        help="the directory the commands would run in: globs expand and paths resolve there",
    )
    check.set_defaults(func=_cmd_check_bash)

    sandbox = sub.add_parser("sandbox-run", help="run a command inside the plan-mode sandbox")
    sandbox.add_argument("--workspace", required=True, help="directory the command runs in")
    sandbox.add_argument("argv", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    sandbox.set_defaults(func=_cmd_sandbox_run)

    doctor = sub.add_parser(
        "doctor",
        help="check config, data directory, database, git, ripgrep, Landlock and tokens",
        description=(
            "Check that this host can run plancord: one line per check, 'ok', 'warn' or "
            "'FAIL' with how to fix it. Exit status 0 when nothing failed, 1 otherwise. "
            "Local and quick (no network), so it also serves as a container health check."
        ),
    )
    doctor.add_argument("--config", type=Path, default=None, help=config_help)
    doctor.set_defaults(func=_cmd_doctor)

    demo = sub.add_parser(
        "demo",
        help="watch the whole plan-mode story offline: no token, no API key, a few seconds",
        description=(
            "Run the real bot against a simulated Discord, with a scripted agent playing the "
            "model, in a temporary directory that is removed afterwards; print what the "
            "channel saw: /plan start, read-only exploration, a refused write, the plan, an "
            "unauthorised click, the approval, progress, the commit."
        ),
    )
    demo.set_defaults(func=_cmd_demo)

    _add_operator_commands(sub, config_help)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
