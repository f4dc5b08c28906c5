"""``plancord demo``: the whole plan-mode story, offline, in one command and well under a
minute.

A newcomer should be able to see what plancord does before they have a Discord token or an
API key. So the demo runs the real bot (cogs, views, runtime, SQLite, a git workspace) in a
temporary directory, against SimCord's simulated Discord, with the model played by the fake
Messages API server and a scripted agent; then it prints what the people in the channel
would have seen, and removes the directory again. It says first which sandbox layer agent
commands run under here; a step that never finishes, a Ctrl-C or a host where no sandbox
works ends it in one line that names ``plancord doctor``, never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import warnings
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TextIO

from plancord.demo.narration import Narrator, indent, plain
from plancord.testing.anthropic_server import (
    Reply,
    Script,
    ToolCall,
    Turn,
    text_turn,
    tool_turn,
)

AGENT = "ada"
TASK = "add a greeting module"
README = "# hello-service\n\nA tiny service. It should say hello to people by name.\n"
APP = 'def main() -> None:\n    print("hello-service is running")\n'
GREET = 'def hello(name: str) -> str:\n    return f"Hello, {name}!"\n'
PLAN: dict[str, Any] = {
    "summary": "Add a greeting module",
    "steps": [
        {
            "description": "Create greet.py with hello(name)",
            "tools": ["create_file"],
            "risk": "low",
        },
        {"description": "Commit it", "tools": ["git_commit"], "risk": "medium"},
    ],
    "questions": [],
    "context_notes": "app.py has no greeting yet; the README asks for hello by name.",
}
#: What ana asks for when she sends v1 back with Edit, and the revision that answers it.
FEEDBACK = "say which commit message you will use"
PLAN_V2: dict[str, Any] = {
    **PLAN,
    "steps": [
        PLAN["steps"][0],
        {
            "description": "Commit it as 'Add greeting module'",
            "tools": ["git_commit"],
            "risk": "medium",
        },
    ],
}
#: ana's direct edit of v2's first step, from the card's Edit directly, before she approves.
EDITED_STEP = {
    "description": "Create greet.py with hello(name) returning the greeting",
    "risk": ["low"],
    "tools": "create_file",
}
#: How long (real time) one step of the story may take before SimCord gives up waiting for
#: the bot: SimCord's 5 s default is one slow sandbox start away on a loaded machine.
SETTLE_SECONDS = 120.0
TOO_SLOW = (
    "plancord demo: a step took longer than {seconds:.0f} s and the story stopped; the "
    "machine may be overloaded or its sandbox slow to start: plancord doctor checks the setup"
)
INTERRUPTED = (
    "plancord demo: stopped (Ctrl-C) before the story ended; if a step seemed stuck, "
    "plancord doctor checks the setup"
)
NO_SANDBOX = "plancord demo: {problem}; plancord doctor says how to fix it"
QUIET_LOGGERS = ("discord", "simcord", "plancord", "aiohttp", "anthropic", "httpx", "asyncio")


def exploring_turns(plan: dict[str, Any] = PLAN) -> list[Turn]:
    """The agent looks around (read-only), tries one write, is refused, and submits ``plan``."""
    return [
        tool_turn(
            ToolCall("view", {"path": "README.md"}),
            ToolCall("grep", {"pattern": "hello"}),
            ToolCall("bash_execute", {"command": "ls && git log --oneline"}),
            text="Let me look around first.",
        ),
        tool_turn(ToolCall("create_file", {"path": "greet.py", "content": GREET})),
        tool_turn(ToolCall("submit_plan", {"plan": plan}), text="Here is my plan."),
    ]


def executing_turns(revision: int = 1) -> list[Reply]:
    """The agent carries out the approved plan: write, commit, tick each step, complete."""
    return [
        tool_turn(
            ToolCall("update_plan_step", {"step": 1, "status": "in_progress"}),
            ToolCall("create_file", {"path": "greet.py", "content": GREET}),
        ),
        tool_turn(
            ToolCall("update_plan_step", {"step": 1, "status": "done"}),
            ToolCall("git_commit", {"message": "Add greeting module"}),
            ToolCall("update_plan_step", {"step": 2, "status": "done"}),
        ),
        tool_turn(ToolCall("complete_plan", {"summary": f"plan v{revision}: greet.py committed"})),
        text_turn("Done: greet.py is committed."),
    ]


def demo_script() -> list[Turn]:
    """The plan cycle without an edit: explore, submit v1, execute it once approved."""
    return [*exploring_turns(), *executing_turns()]


def story_script() -> list[Turn]:
    """Every model turn of ``plancord demo``: v1, the revision v2 that answers ana's Edit,
    the agent's answer to her direct edit v3, and its execution."""
    revise = tool_turn(ToolCall("submit_plan", {"plan": PLAN_V2}), text="Revised.")
    accept = text_turn("Your edit is right; I will wait for approval.")
    return [*exploring_turns(), revise, accept, *executing_turns(3)]


def host_plan_mode(**overrides: Any) -> dict[str, Any]:
    """Plan-mode settings for the demo on this host: where the kernel has no Landlock the
    read-only shell runs without the sandbox, so the story still shows exploring."""
    from plancord.sandbox import landlock_abi

    plan_mode: dict[str, Any] = {} if landlock_abi() > 0 else {"shell_sandbox": "off"}
    return {**plan_mode, **overrides}


async def seed_workspace(workspace: Path) -> None:
    """Give the agent's fresh repository something to explore: a README and an app, committed."""
    from plancord.agent.host_io.git_run import run_git
    from plancord.sandbox import SandboxPolicy

    policy = SandboxPolicy.executing(workspace).for_host_git()
    (workspace / "README.md").write_text(README)
    (workspace / "app.py").write_text(APP)
    for args in (
        ("add", "README.md", "app.py"),
        ("-c", "commit.gpgSign=false", "commit", "--quiet", "--no-verify", "-m", "Add app.py"),
    ):
        output = await run_git(policy, *args)
        if not output.ok:
            raise RuntimeError(f"git {' '.join(args)}: {output.message}")


# -- the story -----------------------------------------------------------------------------


async def _git(workspace: Path, *args: str) -> str:
    from plancord.agent.host_io.git_run import run_git
    from plancord.sandbox import SandboxPolicy

    policy = SandboxPolicy.read_only(workspace)
    return (await run_git(policy, *args)).stdout.rstrip()


def plan_messages(channel: Any) -> list[Any]:
    """The plan messages in ``channel`` (a SimCord channel), oldest first."""
    return [
        m for m in channel.history() if m.embeds and (m.embeds[0].title or "").startswith("Plan:")
    ]


async def tell_story(
    data_dir: Path,
    out: TextIO,
    *,
    script: Script | None = None,
    settle_seconds: float = SETTLE_SECONDS,
    stop_at: str = "result",
) -> int:
    """Run the demo story over ``data_dir`` and print it to ``out``; the exit status.

    ``script`` replaces the model's turns (``story_script()``); a step may take up to
    ``settle_seconds`` of real time before SimCord's TimeoutError ends the story.
    ``stop_at="plan"`` ends it before ana approves, with plan v3 waiting for a decision;
    ``"result"`` (the whole story) ends with the executed plan's result waiting for Merge or
    Discard. SandboxUnavailable, before anything starts, when no sandbox layer works here."""
    from plancord.core.planning import Actor, Phase
    from plancord.sandbox import LayerChoice, landlock_abi, layer_in_use
    from plancord.testing.sim import start_world

    print(await asyncio.to_thread(layer_in_use, LayerChoice.AUTO), file=out, flush=True)
    sandboxed = landlock_abi() > 0
    world = await start_world(
        data_dir, story_script() if script is None else script, plan_mode=host_plan_mode()
    )
    world.env.settle_timeout = settle_seconds
    interrupted = False
    try:
        env = world.env
        guild = env.create_guild("plancord demo")
        channel = guild.create_text_channel(AGENT)
        ana = guild.add_member(env.create_user("ana"))
        bob = guild.add_member(env.create_user("bob"))
        app = world.bot.app
        await app.manager.create(
            AGENT,
            actor=Actor.user(ana.id, "ana"),
            channel_id=channel.id,
            guild_id=guild.id,
            profile="open",
        )
        workspace = app.manager.workspace_of(AGENT)
        await seed_workspace(workspace)
        names = {env.bot.user.id: "plancord", ana.id: "ana", bob.id: "bob"}
        narrator = Narrator(out, env, world.server, channel, names)
        say, beat = narrator.say, narrator.beat

        say("🎬 plancord demo: an AI agent plans before it acts")
        say(f"   #{AGENT} is the channel of the agent {AGENT}; its workspace is a git repo")
        say("   with README.md and app.py. ana asks for a change; bob just hangs around.")
        if not sandboxed:
            say("   (this kernel has no Landlock, so plan-mode shell runs unsandboxed here)")

        beat(f"ana types /plan start task:{TASK}")
        started = await ana.slash(channel, "plan start", task=TASK)
        narrator.interaction("ana", started)
        beat(f"{AGENT} explores, read-only")
        narrator.agent_work()
        beat(f"#{AGENT}")
        narrator.channel_news()

        if not plan_messages(channel):
            say("❌ the agent did not submit a plan")
            return 1
        plan_message = plan_messages(channel)[-1]

        beat("bob clicks Approve")
        refused = await bob.click(plan_message, label="Approve")
        narrator.interaction("bob", refused)
        narrator.channel_news()

        beat(f"ana clicks Edit: {FEEDBACK}")
        shown = await ana.click(plan_message, label="Edit")
        sent = await ana.submit_modal(shown, {"feedback": FEEDBACK, "step": "2"})
        narrator.interaction("ana", sent)
        beat(f"{AGENT} revises its plan")
        narrator.agent_work()
        beat(f"#{AGENT}")
        narrator.channel_news()
        plan_message = plan_messages(channel)[-1]

        beat(f"ana taps Edit directly and rewords step 1: {EDITED_STEP['description']}")
        picked = await ana.click(plan_message, label="Edit directly")
        shown = await ana.select(picked.response.message, ["1"], custom_id="plan:pick-step:0")
        edited = await ana.submit_modal(shown, EDITED_STEP)
        narrator.interaction("ana", edited)
        narrator.agent_work()
        beat(f"#{AGENT}")
        narrator.channel_news()
        plan_message = plan_messages(channel)[-1]
        if stop_at == "plan":
            state = await app.store.load_state(AGENT)
            if env.errors or state.phase is not Phase.SUBMITTED:
                say(f"\n❌ the demo did not finish as expected ({len(env.errors)} bot error(s))")
                return 1
            say()
            say("⏸ stopped at the plan: v3 waits for a decision, nobody approved it.")
            return 0

        beat("ana clicks Approve on v3")
        approved = await ana.click(plan_message, label="Approve")
        narrator.interaction("ana", approved)
        beat(f"{AGENT} executes the approved plan")
        narrator.agent_work()
        progress = [
            m
            for m in channel.history()
            if m.embeds and (m.embeds[0].title or "").startswith(("Executing plan", "Plan v"))
        ]
        if progress:
            beat("progress, as the message was edited")
            for tick in narrator.progress_ticks(progress[-1].id):
                say(indent(plain(tick, names), "   "))
                say()
        beat(f"#{AGENT}")
        narrator.channel_news()

        beat("the workspace")
        say("   files changed by the plan (its branch against main, which did not move):")
        say(indent(await _git(workspace, "diff", "--stat", "main", "HEAD"), "     "))
        say("   git log --oneline:")
        say(indent(await _git(workspace, "log", "--oneline"), "     "))
        audit = [entry.action for entry in await app.store.list_audit(AGENT)]
        say(f"   audit: {' → '.join(audit)}")

        state = await app.store.load_state(AGENT)
        complete = state.phase is Phase.INACTIVE and (workspace / "greet.py").exists()
        await env.settle()
        errors = list(env.errors)
        if errors or not complete:
            say()
            say(f"❌ the demo did not finish as expected ({len(errors)} bot error(s))")
            return 1
        say()
        say("🎉 complete: planned, revised, edited directly, approved, executed and committed.")
        return 0
    except asyncio.CancelledError:
        # Ctrl-C: close at once instead of waiting out the step still running, and let the
        # interrupt, not a step cut short by it, be what the story ends with.
        world.env.settle_timeout = 1.0
        interrupted = True
        with contextlib.suppress(TimeoutError):
            await world.close()
        raise
    finally:
        if not interrupted:
            await world.close()


def tell(story: Coroutine[Any, Any, int], settle_seconds: float = SETTLE_SECONDS) -> int:
    """Run ``story`` (a :func:`tell_story`); a step that never finished, a Ctrl-C or no
    working sandbox is one line on stderr naming ``plancord doctor`` and a non-zero exit."""
    from plancord.sandbox import SandboxUnavailable

    try:
        return asyncio.run(story)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    except TimeoutError:
        print(TOO_SLOW.format(seconds=settle_seconds), file=sys.stderr)
        return 1
    except SandboxUnavailable as exc:
        print(NO_SANDBOX.format(problem=exc), file=sys.stderr)
        return 1


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Only warnings and worse from the libraries, and no deprecation warnings at all."""
    levels = {name: logging.getLogger(name).level for name in QUIET_LOGGERS}
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
