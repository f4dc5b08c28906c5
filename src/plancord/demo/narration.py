"""How the demo prints the channel: embeds, buttons, mentions and timestamps as plain text,
each tool call the agent made with what it got back, and the ``Narrator`` that prints what
changed since it last looked."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO


def indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.splitlines())


def render_embed(embed: Any) -> str:
    """An embed as plain text: title, description, fields, footer."""
    lines = [f"┌─ {embed.title}"] if embed.title else ["┌─"]
    if embed.description:
        lines.append(indent(embed.description, "│  "))
    for embed_field in embed.fields:
        lines.append(f"│  {embed_field.name}")
        lines.append(indent(embed_field.value or "", "│     "))
    footer = embed.footer.text if embed.footer else None
    lines.append(f"└─ {footer}" if footer else "└─")
    return "\n".join(lines)


def render_buttons(message: Any) -> str:
    """The message's buttons: ``[Approve]`` one can click, ``(Approve)`` one that is off."""
    labels = []
    off = False
    for row in message.components:
        for item in getattr(row, "children", ()):
            label = getattr(item, "label", None)
            if label:
                labels.append(f"[{label}]" if not item.disabled else f"({label})")
                off = off or bool(item.disabled)
    legend = "   (in parentheses: buttons now off)" if off else ""
    return "   " + " ".join(labels) + legend if labels else ""


MENTION = re.compile(r"<@!?(\d+)>")
TIMESTAMP = re.compile(r"<t:(\d+)(?::[a-zA-Z])?>")


def plain(text: str, names: Mapping[int, str]) -> str:
    """Discord markup a terminal cannot show, spelt out: mentions, timestamps, bold."""
    text = MENTION.sub(lambda m: "@" + names.get(int(m.group(1)), "someone"), text)
    text = TIMESTAMP.sub(
        lambda m: datetime.fromtimestamp(int(m.group(1)), UTC).strftime("%Y-%m-%d %H:%M UTC"),
        text,
    )
    return text.replace("**", "")


def render_message(message: Any, names: Mapping[int, str]) -> str:
    lines = []
    author = names.get(message.author.id, getattr(message.author, "name", "?"))
    icon = "🤖" if getattr(message.author, "bot", False) else "💬"
    if message.content:
        lines.append(f"{icon} {author}: " + indent(plain(message.content, names), "   ").lstrip())
    elif message.embeds:
        lines.append(f"{icon} {author}:")
    for embed in message.embeds:
        lines.append(indent(plain(render_embed(embed), names), "   "))
    buttons = render_buttons(message)
    if buttons:
        lines.append(buttons)
    return "\n".join(lines)


def _short(value: object, limit: int = 72) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_sentence(text: str) -> str:
    sentence = " ".join(text.split()).split(". ")[0].rstrip(".")
    return _short(sentence + ".", 110)


def _tool_target(call: dict[str, Any]) -> str:
    arguments = call.get("input", {})
    for key in ("command", "path", "pattern", "message", "summary"):
        if key in arguments:
            return _short(arguments[key], 48)
    if "step" in arguments:
        return f"step {arguments['step']} → {arguments.get('status', '')}".rstrip(" →")
    if "plan" in arguments:
        return _short(arguments["plan"].get("summary", ""), 48)
    return ""


def _result_text(result: dict[str, Any]) -> str:
    content = result.get("content", "")
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def render_tool(call: dict[str, Any], result: dict[str, Any] | None) -> str:
    head = f"{call['name']} {_tool_target(call)}".rstrip()
    arguments = call.get("input", {})
    if call["name"] == "update_plan_step" and result is not None and not result.get("is_error"):
        mark = "✅" if arguments.get("status") == "done" else "⏳"
        return f"   {mark} step {arguments.get('step')} {arguments.get('status')}"
    if result is None:
        return f"   🔧 {head}"
    text = _result_text(result)
    if result.get("is_error"):
        try:
            refusal = json.loads(text)
        except ValueError:
            refusal = None
        if isinstance(refusal, dict) and refusal.get("error") == "plan_mode_refusal":
            return (
                f"   ⛔ {head}\n      refused: {refusal.get('tool_kind')} tool in plan mode"
                f"\n      hint to the model: {_first_sentence(refusal.get('hint', ''))}"
            )
        return f"   ⚠️ {head}\n      error: {_short(text, 160)}"
    lines = [line for line in text.splitlines() if line.strip()]
    preview = _short(lines[0], 60) if lines else "ok"
    more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
    return f"   🔧 {head}\n      → {preview}{more}"


@dataclass
class Narrator:
    """Prints what happened since it last looked: the agent's tool calls (from the fake model's
    traffic) and the new or edited messages in the channel."""

    out: TextIO
    env: Any
    server: Any
    channel: Any
    names: dict[int, str]
    seen: dict[int, str] = field(default_factory=dict)
    turns_shown: int = 0

    def say(self, text: str = "") -> None:
        print(text, file=self.out)

    def beat(self, title: str) -> None:
        self.say()
        self.say(f"── {title} " + "─" * max(0, 66 - len(title)))

    def _results(self) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for request in self.server.requests:
            for message in request.get("messages", []):
                content = message.get("content")
                if message.get("role") != "user" or not isinstance(content, list):
                    continue
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        found[block["tool_use_id"]] = block
        return found

    def agent_work(self) -> None:
        results = self._results()
        responses = self.server.responses[self.turns_shown :]
        self.turns_shown = len(self.server.responses)
        for response in responses:
            for block in response["content"]:
                if block["type"] == "tool_use":
                    self.say(render_tool(block, results.get(block["id"])))

    def channel_news(self) -> None:
        for message in self.channel.history():
            shown = render_message(message, self.names)
            if self.seen.get(message.id) == shown:
                continue
            edited = message.id in self.seen
            self.seen[message.id] = shown
            if edited:
                self.say(f"   ✏️ (edited) {shown.lstrip()}")
            else:
                self.say(shown)

    def interaction(self, who: str, result: Any) -> None:
        response = result.response
        if response is None:
            return
        content = getattr(response, "content", "") or ""
        if result.ephemeral:
            text = plain(content, self.names)
            self.say(f"🔒 only {who} sees: " + indent(text, "   ").lstrip())

    def progress_ticks(self, message_id: int) -> Iterator[str]:
        """Each distinct state of the progress message, as the bot edited it."""
        last = None
        posted = f"/channels/{self.channel.id}/messages"
        for request in self.env.http_requests:
            payload = request.json if isinstance(request.json, dict) else {}
            embeds = payload.get("embeds") or ()
            first = request.method == "POST" and request.path == posted
            if first:
                embeds = [e for e in embeds if (e.get("title") or "").startswith("Executing")]
            elif not request.path.endswith(f"/messages/{message_id}"):
                continue
            for embed in embeds:
                text = f"{embed.get('title', '')}\n{embed.get('description', '')}".strip()
                if text != last:
                    last = text
                    yield text
