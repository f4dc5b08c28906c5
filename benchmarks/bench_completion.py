"""What building and posting a completion card costs, for a 1 MB diff.

Run with ``python benchmarks/bench_completion.py [RUNS]``. The real bot in a SimCord world
(a scripted model) executes a plan whose step writes 1 MB of text, then completes; the card
is then posted RUNS more times, alternating with the baseline:

* ``git call``: one ``git rev-parse HEAD`` in the agent's sandbox (the baseline: every git
  run the card needs is one such spawn);
* ``plain post``: the bot posting one message with the same diff attached as a file (what
  any card with its diff costs in Discord I/O alone, in SimCord);
* ``card``: ``ResultCards.post``: the per-step summary (the branch's step commits with
  their line counts, the execution's events, the push remote), the full diff written by
  git in the agent's sandbox and read back, the embed and buttons, and the post;

each as median and p90, and as a ratio to the sandboxed git call, measured in one run.
"""

from __future__ import annotations

import asyncio
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import discord

from _common import REPO_ROOT, percentile

# isort: split

from plancord.agent.host_io.git_run import run_git
from plancord.core.planning import Actor
from plancord.storage.executions import ExecutionStore
from plancord.testing.anthropic_server import ToolCall, text_turn, tool_turn
from plancord.testing.sim import start_world

DIFF_BYTES = 1_000_000
PLAN = {
    "summary": "Write a large file",
    "steps": [{"description": "Write big.txt", "tools": ["bash_execute"], "files": ["big.txt"]}],
}


def row(name: str, samples: list[float], base: float | None) -> str:
    median = statistics.median(samples)
    ratio = f"{median / base:6.2f}x" if base else "       "
    high = percentile(samples, 0.9)
    return f"  {name:<11} median {median:8.1f} ms   p90 {high:8.1f} ms   {ratio}"


async def measure(data_dir: Path, runs: int) -> int:
    command = f"yes 'a line of the change, forty bytes long' | head -c {DIFF_BYTES} > big.txt"
    script = [
        tool_turn(ToolCall("submit_plan", {"plan": PLAN})),
        tool_turn(ToolCall("bash_execute", {"command": command})),
        tool_turn(ToolCall("complete_plan", {"summary": "written"})),
        text_turn("Done."),
    ]
    world = await start_world(data_dir, script)
    print(f"(the repository at {REPO_ROOT.name}; the world in a temporary directory)")
    try:
        env = world.env
        env.settle_timeout = 300.0
        guild = env.create_guild("plancord")
        channel = guild.create_text_channel("ada")
        ana = guild.add_member(env.create_user("ana"))
        app = world.bot.app
        await app.manager.create(
            "ada",
            actor=Actor.user(ana.id, "ana"),
            channel_id=channel.id,
            guild_id=guild.id,
            profile="open",
        )
        await ana.slash(channel, "plan start", task="write a large file")
        bot_id = env.bot.user.id
        plan = [
            m
            for m in channel.history()
            if m.author.id == bot_id and m.embeds and (m.embeds[0].title or "").startswith("Plan")
        ][-1]
        await ana.click(plan, label="Approve")
        await app.runtime.wait_idle("ada")
        record = await ExecutionStore(app.db).latest("ada")
        if record is None or record.result is None:
            print("the plan did not execute to a result", file=sys.stderr)
            return 1
        cards = world.bot.notifier.results
        made = await cards.attachment(record.plan_id, "result")
        if made is None:
            print("no diff", file=sys.stderr)
            return 1
        target = world.bot.get_partial_messageable(channel.id, guild_id=guild.id)
        policy = app.runtime.results.policy_of("ada")
        plain: list[float] = []
        card: list[float] = []
        spawn: list[float] = []
        for _ in range(runs):
            started = time.perf_counter()
            await run_git(policy, "rev-parse", "HEAD")
            spawn.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await target.send("diff", file=discord.File(io.BytesIO(made.data), "result.diff"))
            plain.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await cards.post(record.plan_id)
            card.append((time.perf_counter() - started) * 1000)
        base = statistics.median(spawn)
        print(f"completion card for a {len(made.data) / 1e6:.1f} MB diff, {runs} posts each:")
        print(row("git call", spawn, base))
        print(row("plain post", plain, base))
        print(row("card", card, base))
        return 0
    finally:
        await world.close()


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(measure(Path(tmp), runs))


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
