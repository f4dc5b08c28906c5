"""``plancord plan result-diff --agent NAME``: print the full diff of an agent's newest
executed plan, however large, for an operator reviewing a result away from Discord.

Why this exists apart from ``cli_operator``: it reads the workspace's git (through the
agent's sandbox, as the bot does, git's output piped into a private file of the host's,
never one in the workspace) as well as the database, and streams its output instead of
printing one text. The completion card attaches the same diff, gzipped or cut when past
Discord's upload limit; this prints all of it.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

from plancord.config import Config


def cmd_result_diff(args: argparse.Namespace) -> int:
    from plancord.config import ConfigError, load_config
    from plancord.core.errors import PlancordError

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"plancord: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_print_diff(config, args.agent, args.plan))
    except PlancordError as exc:
        print(f"plancord: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1


async def _print_diff(config: Config, agent: str, plan_id: str | None) -> int:
    from plancord.agent.execution.host_git import BranchError
    from plancord.agent.execution.starter import branch_record
    from plancord.command.operator import open_services

    async with open_services(config) as services:
        await services.store.get_agent(agent)
        executions = services.executions
        record = await executions.get(plan_id) if plan_id else await executions.latest(agent)
        if record is None or record.agent != agent:
            print(f"plancord: agent {agent} has no executed plan", file=sys.stderr)
            return 1
        reading = services.homes.of(agent).reading
        try:
            async with reading.diff_file(branch_record(record)) as path:
                await asyncio.to_thread(_copy_out, path)
        except BranchError as exc:
            state = record.outcome or "its branch is gone"
            print(f"plancord: no diff for plan {record.plan_id}: {state} ({exc})", file=sys.stderr)
            return 1
        return 0


def _copy_out(path: Path) -> None:
    with path.open("rb") as source:
        shutil.copyfileobj(source, sys.stdout.buffer)
    sys.stdout.buffer.flush()


def add_result_diff(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``plan result-diff`` beyond ``--config`` and ``--agent``."""
    parser.add_argument(
        "--plan", metavar="ID", help="a plan id (default: the agent's newest executed plan)"
    )
