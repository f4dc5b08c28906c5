"""A hostile world: the real bot under SimCord with a scripted (attacker-steered) model.

The ``hostile`` fixture (``conftest.py``) builds it: ``ada`` is the agent under attack,
bound to ``#ada``; ``other`` is a second agent whose workspace holds a secret; a
Docker-style secret file and the database sit beside them on the host; the bot's
environment holds fake tokens. :meth:`Hostile.leaks` says which of those secrets show up
anywhere an attacker could read them: a channel, a tool result the model got, the
database's bytes. ``instructed`` and ``planning`` start the two kinds of attack.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plancord.core.planning import Phase
from plancord.testing.anthropic_server import text_turn
from plancord.testing.sim import World

FAKE_DISCORD_TOKEN = "MTIz.fake-discord-token.SECRET-d1sc0rd"
FAKE_API_KEY = "sk-ant-fake-api-key-SECRET-4nthr0p1c"
OTHER_SECRET = "other-agent-private-notes-SECRET-0th3r"
FILE_SECRET = "docker-secret-file-SECRET-f1l3"
SECRETS = (FAKE_DISCORD_TOKEN, FAKE_API_KEY, OTHER_SECRET, FILE_SECRET)

#: Variables the sandbox sets itself; any other entry of the bot's original environment
#: that reaches a tool result leaked from the host.
_SANDBOX_OWN = {b"PATH", b"HOME", b"LANG", b"LC_ALL", b"TERM", b"PAGER", b"TMPDIR", b"PWD"}


def host_environment_entries() -> list[str]:
    """Distinctive ``NAME=value`` entries of this process's original environment block."""
    raw = Path("/proc/self/environ").read_bytes().split(b"\0")
    entries = []
    for entry in raw:
        name, _, value = entry.partition(b"=")
        if name and name not in _SANDBOX_OWN and len(value) >= 6:
            entries.append(entry.decode(errors="replace"))
    return entries


@dataclass
class Hostile:
    world: World
    guild: Any
    channel: Any
    ana: Any
    data_dir: Path
    secret_file: Path

    @property
    def app(self) -> Any:
        return self.world.bot.app

    @property
    def workspace(self) -> Path:
        path: Path = self.app.manager.workspace_of("ada")
        return path

    def tool_results(self) -> list[str]:
        """Every tool_result's content the bot sent the model, in order (the newest request
        of a conversation holds them all)."""
        if not self.world.server.requests:
            return []
        seen: list[str] = []
        for message in self.world.server.requests[-1]["messages"]:
            if message["role"] != "user" or not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block.get("content")
                    seen.append(content if isinstance(content, str) else str(content))
        return seen

    def channel_texts(self) -> list[str]:
        texts: list[str] = []
        for channel in self.guild.channels.values():
            if not hasattr(channel, "history"):
                continue
            for message in channel.history():
                texts.append(message.content or "")
                texts += [str(embed.to_dict()) for embed in message.embeds]
        return texts

    def database_bytes(self) -> bytes:
        return b"".join(p.read_bytes() for p in sorted(self.data_dir.glob("plancord.db*")))

    def leaks(self, *extra: str) -> list[str]:
        """Each secret (and each of ``extra``) found where an attacker could read it."""
        visible = "\n".join([*self.tool_results(), *self.channel_texts()])
        stored = self.database_bytes()
        return [
            secret
            for secret in (*SECRETS, *extra)
            if secret in visible or secret.encode() in stored
        ]


async def instructed(hostile: Any, script: list[Any], **options: Any) -> Hostile:
    """ana asks ``ada`` for something; the attacker-steered model plays ``script``."""
    scene: Hostile = await hostile([*script, text_turn("done")], **options)
    await scene.ana.send(scene.channel, "please look into it")
    return scene


async def planning(hostile: Any, script: list[Any], **options: Any) -> Hostile:
    """ana puts ``ada`` in plan mode; the model explores with ``script``."""
    scene: Hostile = await hostile([*script, text_turn("still exploring")], **options)
    await scene.ana.slash(scene.channel, "plan start", task="look around")
    assert (await scene.app.store.load_state("ada")).phase is Phase.GATHERING
    return scene
