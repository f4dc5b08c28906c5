"""Draw docs/plan-card.png: the plan message of ``plancord demo``, as Discord shows it.

The picture in the README is the demo's real plan embed: this script runs the demo's first
half (``/plan start``, the scripted agent exploring and submitting its plan) through the real
bot under SimCord, takes the embed the bot posted and draws it with Pillow, which is not a
dependency of plancord: ``.venv/bin/pip install pillow`` first, then run
``.venv/bin/python docs/render_plan_card.py`` from the repository root.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from plancord.core.planning import Actor
from plancord.demo import AGENT, TASK, exploring_turns, host_plan_mode, quiet, seed_workspace
from plancord.testing.sim import start_world

OUT = Path(__file__).with_name("plan-card.png")
FONTS = Path("/usr/share/fonts/truetype/dejavu")
BACKGROUND, CARD, TEXT, MUTED = "#313338", "#2b2d31", "#dbdee1", "#949ba4"
RISK_COLOURS = {"🟢": "#3ba55d", "🟡": "#faa81a", "🔴": "#ed4245"}
WIDTH, MARGIN, WRAP = 760, 24, 78


async def plan_message() -> tuple[dict[str, Any], list[str]]:
    """The embed (as Discord's JSON) and the button labels of the demo's plan message."""
    with tempfile.TemporaryDirectory() as temp:
        world = await start_world(Path(temp), exploring_turns(), plan_mode=host_plan_mode())
        try:
            env = world.env
            guild = env.create_guild("plancord demo")
            channel = guild.create_text_channel(AGENT)
            ana = guild.add_member(env.create_user("ana"))
            await world.bot.app.manager.create(
                AGENT,
                actor=Actor.user(ana.id, "ana"),
                channel_id=channel.id,
                guild_id=guild.id,
                profile="open",
            )
            await seed_workspace(world.bot.app.manager.workspace_of(AGENT))
            await ana.slash(channel, "plan start", task=TASK)
            await env.settle()
            message = next(
                m
                for m in reversed(list(channel.history()))
                if m.embeds and (m.embeds[0].title or "").startswith("Plan:")
            )
            labels = [
                child.label
                for row in message.components
                for child in getattr(row, "children", [])
                if getattr(child, "label", None)
            ]
            return message.embeds[0].to_dict(), labels
        finally:
            await world.close()


def wrap(text: str, width: int = WRAP) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        words, line = paragraph.split(" "), ""
        for word in words:
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


def plain(line: str) -> str:
    """Markdown marks dropped, and emoji the font has no glyph for (outside the BMP)."""
    text = line.replace("**", "").replace("`", "")
    return "".join(c for c in text if ord(c) <= 0xFFFF).strip()


def draw(embed: dict[str, Any], labels: list[str]) -> Image.Image:
    regular = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), 15)
    bold = ImageFont.truetype(str(FONTS / "DejaVuSans-Bold.ttf"), 15)
    title_font = ImageFont.truetype(str(FONTS / "DejaVuSans-Bold.ttf"), 17)
    small = ImageFont.truetype(str(FONTS / "DejaVuSans.ttf"), 12)
    rows: list[tuple[str, Any, str, str | None]] = [("title", title_font, embed["title"], None)]
    for line in wrap(embed.get("description", "")):
        heading = line.startswith("**") and line.endswith("**")
        rows.append(("text", bold if heading else regular, plain(line), None))
    for field in embed.get("fields", []):
        name = field["name"]
        dot = next((c for c in RISK_COLOURS if name.startswith(c)), None)
        rows.append(("gap", regular, "", None))
        rows.append(("field", bold, name.removeprefix(dot or "").strip(), dot))
        for line in wrap(field["value"]):
            rows.append(("text", regular, plain(line), None))
    rows.append(("gap", regular, "", None))
    for line in wrap(embed.get("footer", {}).get("text", ""), 96):
        rows.append(("footer", small, line, None))
    height = 2 * MARGIN + 22 * len(rows) + 70
    image = Image.new("RGB", (WIDTH, height), BACKGROUND)
    pen = ImageDraw.Draw(image)
    colour = f"#{embed.get('color', 0x5865F2):06x}"
    card_bottom = MARGIN + 22 * len(rows) + 16
    pen.rounded_rectangle((MARGIN, MARGIN, WIDTH - MARGIN, card_bottom), 6, fill=CARD)
    pen.rectangle((MARGIN, MARGIN, MARGIN + 4, card_bottom), fill=colour)
    y = MARGIN + 10
    for kind, font, text, dot in rows:
        x = MARGIN + 20
        if dot is not None:
            pen.ellipse((x, y + 3, x + 12, y + 15), fill=RISK_COLOURS[dot])
            x += 18
        pen.text((x, y), text, font=font, fill=MUTED if kind == "footer" else TEXT)
        y += 22
    x, y = MARGIN, card_bottom + 12
    styles = {"Approve": "#248046", "Reject": "#da373c"}
    for label in labels:
        w = int(pen.textlength(label, font=regular)) + 28
        pen.rounded_rectangle((x, y, x + w, y + 32), 4, fill=styles.get(label, "#4e5058"))
        pen.text((x + 14, y + 7), label, font=regular, fill="#ffffff")
        x += w + 8
    return image


def main() -> None:
    with quiet():
        embed, labels = asyncio.run(plan_message())
    draw(embed, labels).save(OUT, optimize=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
