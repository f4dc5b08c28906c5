"""Files attached to a message for an agent: read into the message, or refused out loud.

Discord delivers attachments beside the text; dropping them silently leaves a user who sent
``error.log`` wondering why the agent ignores it. Text files up to ``MAX_ATTACHMENT_BYTES``
(at most ``MAX_ATTACHMENTS`` per message) are read as UTF-8 and appended to the message the
agent receives, each in a fenced block under its file name; anything else (images, archives,
binaries, larger files, a file Discord will not hand over) is named in a reply that says why
it was not read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import discord

log = logging.getLogger(__name__)

MAX_ATTACHMENT_BYTES = 100_000
MAX_ATTACHMENTS = 5
TEXT_SUFFIXES = frozenset(
    {
        ".txt", ".md", ".rst", ".log", ".csv", ".tsv", ".json", ".yaml", ".yml", ".toml",
        ".ini", ".cfg", ".conf", ".xml", ".html", ".css", ".js", ".ts", ".tsx", ".jsx",
        ".py", ".rs", ".go", ".java", ".kt", ".c", ".h", ".cpp", ".hpp", ".cs", ".rb",
        ".php", ".sh", ".bash", ".zsh", ".sql", ".diff", ".patch", ".swift", ".lua", ".r",
    }
)  # fmt: skip


@dataclass(slots=True)
class ReadAttachments:
    """The text to add to the agent's message, and the files that were not read, with why."""

    text: str = ""
    refused: list[str] = field(default_factory=list)

    def refusal_message(self) -> str:
        lines = "\n".join(f"- {item}" for item in self.refused)
        return f"📎 Not passed to the agent:\n{lines}"


def _is_text(attachment: discord.Attachment) -> bool:
    content_type = (attachment.content_type or "").split(";")[0].strip().lower()
    if content_type.startswith("text/") or content_type in ("application/json", "application/xml"):
        return True
    return PurePosixPath(attachment.filename.lower()).suffix in TEXT_SUFFIXES


async def read_attachments(attachments: list[discord.Attachment]) -> ReadAttachments:
    result = ReadAttachments()
    parts: list[str] = []
    for index, attachment in enumerate(attachments):
        name = attachment.filename
        if index >= MAX_ATTACHMENTS:
            result.refused.append(f"`{name}`: at most {MAX_ATTACHMENTS} files per message")
            continue
        if not _is_text(attachment):
            result.refused.append(f"`{name}`: only text files are read")
            continue
        if attachment.size > MAX_ATTACHMENT_BYTES:
            result.refused.append(
                f"`{name}`: {attachment.size:,} bytes, more than the "
                f"{MAX_ATTACHMENT_BYTES:,} read per file"
            )
            continue
        try:
            data = await attachment.read()
        except (discord.HTTPException, discord.NotFound) as exc:
            log.warning("could not download attachment %s: %s", name, exc)
            result.refused.append(f"`{name}`: Discord did not hand the file over; send it again")
            continue
        try:
            body = data[:MAX_ATTACHMENT_BYTES].decode("utf-8")
        except UnicodeDecodeError:
            result.refused.append(f"`{name}`: not UTF-8 text")
            continue
        fence = "````" if "```" in body else "```"
        parts.append(f"[attached file {name}]\n{fence}\n{body.rstrip()}\n{fence}")
    result.text = "\n\n".join(parts)
    return result
