"""The ``plancord`` command: run the bot, migrate, classify shell commands, sandbox, doctor."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def _cmd_check_bash(args: argparse.Namespace) -> int:
    from plancord.core.shell.readonly import classify

    commands: list[str] = (
        [args.command] if args.command is not None else sys.stdin.read().splitlines()
    )
    for command in commands:
        if args.command is None and not command.strip():
            continue
        verdict = classify(command)
        if args.json:
            record = {"command": command, "allowed": verdict.allowed, "reason": verdict.reason}
            print(json.dumps(record, ensure_ascii=False))
        else:
            word = "allowed" if verdict.allowed else "denied"
            print(f"{word}: {verdict.reason}")
    return 0


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
    from plancord.storage.migrations import migrate_file

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

    try:
        load_config(args.config)
        Secrets.from_env().require()
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    print("plancord: the Discord bot is not part of this build yet", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plancord", description="AI coding agents on Discord that plan before they act."
    )
    sub = parser.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    config_help = "YAML config file (default: ./config.yaml when it exists, else built-in defaults)"

    run = sub.add_parser("run", help="run the Discord bot")
    run.add_argument("--config", type=Path, default=None, help=config_help)
    run.set_defaults(func=_cmd_run)

    migrate = sub.add_parser("migrate", help="create or upgrade the database")
    migrate.add_argument("--config", type=Path, default=None, help=config_help)
    migrate.set_defaults(func=_cmd_migrate)

    check = sub.add_parser(
        "check-bash", help="classify shell commands as read-only (allowed) or not (denied)"
    )
    check.add_argument("command", nargs="?", help="one command; without it, one per line on stdin")
    check.add_argument("--json", action="store_true", help="print one JSON object per command")
    check.set_defaults(func=_cmd_check_bash)

    sandbox = sub.add_parser("sandbox-run", help="run a command inside the plan-mode sandbox")
    sandbox.add_argument("--workspace", required=True, help="directory the command runs in")
    sandbox.add_argument("argv", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    sandbox.set_defaults(func=_cmd_sandbox_run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
