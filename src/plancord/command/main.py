"""The ``plancord`` command: run the bot, migrate, classify shell commands, sandbox, doctor,
demo."""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import plancord
from plancord.command.plan_commands import add_operator_commands
from plancord.command.rules import add_rules_commands

if TYPE_CHECKING:
    from plancord.config import Config


def _cmd_check_bash(args: argparse.Namespace) -> int:
    """Judge commands as run in ``--workspace``; exit 1 when any is denied, 2 on a usage error."""
    from plancord.core.shell.readonly import classify
    from plancord.core.shell.readonly.operator_rules import OperatorRule

    if not Path(args.workspace).is_dir():
        print(
            f"plancord check-bash: --workspace {args.workspace} is not a directory; give the "
            "folder the commands would run in",
            file=sys.stderr,
        )
        return 2

    rules: tuple[OperatorRule, ...] = ()
    if args.config is not None:
        from plancord.config import ConfigError, load_config

        try:
            rules = load_config(args.config).shell.operator_rules
        except ConfigError as exc:
            print(f"plancord: {exc}", file=sys.stderr)
            return 2
    commands: list[str] = (
        [args.command] if args.command is not None else sys.stdin.read().splitlines()
    )
    denied = False
    for command in commands:
        if args.command is None and not command.strip():
            continue
        ran: list[str] = []
        if args.stages:
            from plancord.agent.tools.staging import judge_staged

            verdict = judge_staged(command, Path(args.workspace), rules, ran=ran)
        else:
            verdict = classify(command, args.workspace, rules)
        denied = denied or not verdict.allowed
        if args.json:
            record = {
                "command": command,
                "allowed": verdict.allowed,
                "reason": verdict.reason,
                "runs": verdict.script,
                "stages_run": ran,
                "stage": verdict.stage,
            }
            if args.explain:
                record["decided_by"] = list(verdict.decided_by)
                record["read_as"] = list(verdict.constructs)
            print(json.dumps(record, ensure_ascii=False))
        else:
            word = "allowed" if verdict.allowed else "denied"
            print(f"{word}: {verdict.reason}")
            for stage in ran:
                print(f"  ran first (read-only sandbox): {stage}")
            if verdict.stage is not None:
                print(f"  would run first (read-only; --stages runs it): {verdict.stage}")
            if verdict.script is not None:
                print(f"  runs: {verdict.script}")
            if args.explain:
                for construct in verdict.constructs:
                    print(f"  read as: {construct}")
                for decided in verdict.decided_by:
                    print(f"  decided by: {decided}")
    return 1 if denied else 0


def _cmd_sandbox_run(args: argparse.Namespace) -> int:
    """CMD in the plan-mode sandbox the config's ``sandbox`` section makes (layer, limits,
    shared paths), as an agent's planning command would run, with this process's stdio: no
    shell, no classifier. Exits with the command's status, or 2 after a one-line error."""
    from plancord.config import ConfigError, load_config
    from plancord.sandbox import SandboxUnavailable, layer_in_use, run_attached

    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        print("plancord sandbox-run: give a command after --", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    workspace = Path(args.workspace)
    if not workspace.is_dir():
        print(f"plancord sandbox-run: workspace {workspace} is not a directory", file=sys.stderr)
        return 2
    policy = config.sandbox.settings(frozenset()).walled(workspace.resolve())
    try:
        # Which layer walls the command, on stderr: stdout is the command's own.
        print(f"plancord sandbox-run: {layer_in_use(config.sandbox.layer)}", file=sys.stderr)
        return run_attached(argv, policy)
    except SandboxUnavailable as exc:
        print(f"plancord sandbox-run: {exc}", file=sys.stderr)
        return 2


def _cmd_migrate(args: argparse.Namespace) -> int:
    from plancord.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    from plancord.core.errors import PlancordError
    from plancord.storage.engines import migrate_database

    where = config.database_label
    if args.source is not None:
        # A relative sqlite:PATH resolves as data_dir does: against the config's folder.
        base = Path(args.config).parent if args.config is not None else Path.cwd()
        return _copy_into(config.database_target, where, args.source, base)
    if not _data_dir_ready(config):
        return 2
    try:
        before, after = asyncio.run(migrate_database(config.database_target))
    except PlancordError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(
            f"plancord: cannot create the database {where}: {exc.strerror or exc}; "
            "give the bot's user write access, or change data_dir",
            file=sys.stderr,
        )
        return 2
    if before == after:
        print(f"database {where} is up to date (version {after})")
    else:
        print(f"database {where} migrated from version {before} to {after}")
    return 0


def _data_dir_ready(config: Config) -> bool:
    """The data directory usable and made private (created when missing); otherwise the
    one line saying why and how to fix it."""
    from plancord.process.data_dir import data_dir_fix, data_dir_problem, make_private_dir

    problem = data_dir_problem(config)
    if problem is None:
        try:
            make_private_dir(config.data_dir)
        except OSError as exc:
            problem = f"cannot be created ({exc.strerror or exc})"
    if problem is None:
        return True
    print(
        f"plancord: cannot use the data directory {config.data_dir}: {problem}; "
        f"{data_dir_fix(problem)}",
        file=sys.stderr,
    )
    return False


def _copy_into(target: Path | str, where: str, source: str, base: Path) -> int:
    """``migrate --from sqlite:PATH``: the SQLite file's rows into the configured PostgreSQL."""
    from plancord.core.errors import PlancordError
    from plancord.storage.copy import copy_sqlite_to_postgres

    if not source.startswith("sqlite:") or source == "sqlite:":
        print(f"plancord: --from takes sqlite:PATH, not {source!r}", file=sys.stderr)
        return 2
    if isinstance(target, Path):
        print(
            "plancord: --from copies into PostgreSQL; set database: postgresql://… in the config",
            file=sys.stderr,
        )
        return 2
    path = base / Path(source.removeprefix("sqlite:")).expanduser()
    try:
        copied = asyncio.run(copy_sqlite_to_postgres(path, target))
    except PlancordError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{c.table}: {c.rows}" for c in copied)
    print(f"copied {path} into {where}: {counts}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from plancord.process.init import run_as_init

    return run_as_init(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from plancord.discord_bot.serving import stop_before_the_loop

    stop_before_the_loop()
    from plancord.config import ConfigError, Secrets, load_config
    from plancord.process.hardening import harden

    try:
        config = load_config(args.config)
        secrets = Secrets.from_env()
        secrets.require()
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    if not _data_dir_ready(config):
        return 2
    harden(Secrets.environment_names())
    configure_logging(config.log_level)
    from plancord.sandbox import Layer, SandboxUnavailable, choose_layer, layer_in_use

    try:
        layer = layer_in_use(config.sandbox.layer)
    except SandboxUnavailable as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    # A weaker wall than bubblewrap is worth a warning, not a line among the info.
    bubblewrap = choose_layer(config.sandbox.layer) is Layer.BUBBLEWRAP
    logging.getLogger("plancord.run").log(logging.INFO if bubblewrap else logging.WARNING, layer)
    import discord

    from plancord.discord_bot.bot import make_bot
    from plancord.discord_bot.serving import Serving
    from plancord.llm.anthropic_client import AnthropicModelClient

    # The bot never joins a voice channel: no warning about voice libraries it does not use.
    discord.VoiceClient.warn_nacl = False
    discord.VoiceClient.warn_dave = False

    token = secrets.discord_token.get_secret_value() if secrets.discord_token else ""
    api_key = secrets.anthropic_api_key.get_secret_value() if secrets.anthropic_api_key else ""
    bot = make_bot(
        config,
        model_factory=lambda: AnthropicModelClient(
            api_key=api_key,
            base_url=config.anthropic.base_url,
            max_retries=config.anthropic.max_retries,
            timeout_seconds=config.anthropic.timeout_seconds,
            max_concurrent_requests=config.anthropic.max_concurrent_requests,
        ),
    )
    return asyncio.run(Serving(bot, token).run())


def _cmd_doctor(args: argparse.Namespace) -> int:
    from plancord.doctor import run_doctor

    return run_doctor(args.config)


def _cmd_demo(args: argparse.Namespace) -> int:
    from plancord.demo.rehearsal import run_demo

    return run_demo(keep=args.keep, stop_at=args.stop_at)


def configure_logging(level: str) -> None:
    """Everything to stderr, one line per record; the ``[plan-mode]`` lines are among them."""
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


CONFIG_HELP = (
    "YAML config file (default: ./config.yaml when it exists, else built-in defaults); "
    "before or after the command"
)


def build_parser() -> argparse.ArgumentParser:
    """The ``plancord`` parser: the three commands a newcomer needs first, then the rest.

    ``--config`` is accepted before the command (``plancord --config c.yaml doctor``) and
    after it; given after, it wins.
    """
    parser = argparse.ArgumentParser(
        prog="plancord",
        description="AI coding agents on Discord that plan before they act.",
        epilog="Start with 'plancord demo'. 'plancord COMMAND --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"plancord {installed_version()}")
    parser.add_argument("--config", type=Path, default=None, help=CONFIG_HELP)
    sub = parser.add_subparsers(dest="cmd", metavar="COMMAND")
    # Given after the command, --config overrides the one before it; absent, it leaves it be.
    config_after: dict[str, Any] = {"type": Path, "default": argparse.SUPPRESS, "help": CONFIG_HELP}

    demo = sub.add_parser(
        "demo",
        help="watch the whole plan-mode story offline: no token, no API key, under a minute",
        description=(
            "Run the real bot against a simulated Discord, with a scripted agent playing the "
            "model, in a temporary directory that is removed afterwards; print what the "
            "channel saw: /plan start, read-only exploration, a refused write, the plan, an "
            "unauthorised click, an Edit and the revised plan, the approval, progress, the "
            "commit."
        ),
    )
    demo.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        default=None,
        help="keep the demo's database and workspace in DIR (new or empty) instead of "
        "removing them; then try PLANCORD_DATA_DIR=DIR plancord agents list",
    )
    demo.add_argument(
        "--stop-at",
        choices=("result", "plan"),
        default="result",
        help="where the story stops: 'plan' before the approval, leaving plan v3 waiting for "
        "plancord plan approve or reject; 'result' (default: the whole story) with the "
        "executed plan's result waiting for plancord plan merge or discard",
    )
    demo.set_defaults(func=_cmd_demo)

    doctor = sub.add_parser(
        "doctor",
        help="check config, data directory, database, git, ripgrep, sandbox and tokens",
        description=(
            "Check that this host can run plancord: one line per check, 'ok', 'warn' or "
            "'FAIL' with how to fix it. Exit status 0 when nothing failed, 1 otherwise. "
            "Local and quick (no network), so it also serves as a container health check."
        ),
    )
    doctor.add_argument("--config", **config_after)
    doctor.set_defaults(func=_cmd_doctor)

    run = sub.add_parser(
        "run",
        help="run the Discord bot",
        description=(
            "Run the Discord bot. DISCORD_TOKEN and ANTHROPIC_API_KEY come from the "
            "environment (or files named by DISCORD_TOKEN_FILE and ANTHROPIC_API_KEY_FILE), "
            "never from the config file. The database is created or migrated at start, "
            "and the metrics endpoint started, before the login; a Discord that does not "
            "answer is tried again (said once a minute). SIGINT or SIGTERM stops it, exit 0."
        ),
    )
    run.add_argument("--config", **config_after)
    run.set_defaults(func=_cmd_run)

    migrate = sub.add_parser(
        "migrate",
        help="create or upgrade the database",
        description=(
            "Create the database or bring it to this plancord's schema, SQLite or PostgreSQL "
            "(plancord run also does this at start). With --from, copy an existing SQLite "
            "database into the configured, empty PostgreSQL one."
        ),
    )
    migrate.add_argument("--config", **config_after)
    migrate.add_argument(
        "--from",
        dest="source",
        metavar="sqlite:PATH",
        default=None,
        help="copy an existing SQLite database into the configured (empty) PostgreSQL one",
    )
    migrate.set_defaults(func=_cmd_migrate)

    add_operator_commands(sub, config_after)
    add_rules_commands(sub, config_after)

    check = sub.add_parser(
        "check-bash",
        help="classify shell commands as read-only (allowed) or not (denied); exit 1 if any "
        "is denied",
        description=(
            "Judge shell commands as plan mode's read-only filter does: allowed (with the "
            "exact script that would run) or denied (with the reason). Exit 0 when every "
            "command is allowed, 1 when any is denied, 2 on a usage error."
        ),
    )
    check.add_argument("command", nargs="?", help="one command; without it, one per line on stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object per command")
    check.add_argument(
        "--workspace",
        default=".",
        help="the directory the commands would run in: globs expand and paths resolve there",
    )
    check.add_argument(
        "--explain", action="store_true", help="show which rule decided each command"
    )
    check.add_argument(
        "--stages",
        action="store_true",
        help="run the stages a command asks for (its substitutions and loop inputs) in the "
        "read-only sandbox, as bash_execute does, and judge the result",
    )
    check.add_argument(
        "--config",
        **{
            **config_after,
            "help": "judge with the operator's shell.read_only_rules from this config file",
        },
    )
    check.set_defaults(func=_cmd_check_bash)

    sandbox = sub.add_parser(
        "sandbox-run",
        help="run a command inside the plan-mode sandbox",
        description=(
            "Run CMD inside the plan-mode sandbox (no read-only filter), as the config's "
            "sandbox section makes it, and exit with its status: for operators checking what "
            "their kernel enforces."
        ),
    )
    sandbox.add_argument("--workspace", required=True, help="directory the command runs in")
    sandbox.add_argument(
        "--config",
        **{
            **config_after,
            "help": "the config whose sandbox section (layer, limits, shared_paths) applies; "
            "before the --",
        },
    )
    sandbox.add_argument("argv", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    sandbox.set_defaults(func=_cmd_sandbox_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd is None:
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
    except KeyboardInterrupt:
        print(f"plancord: stopped (Ctrl-C) during {args.cmd}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
