"""Draw docs/plan-card.png and docs/plan-card-edited.png: plan messages of ``plancord demo``,
as Discord shows them.

The picture in the README is the demo's real plan embed: this script runs the demo's first
half (``/plan start``, the scripted agent exploring and submitting its plan) through the real
bot under SimCord and takes the embed the bot posted. Then ana taps **Edit directly**, picks
step 1 and submits its form with new text and a file, and comments on step 2: the
second picture is the card of that revision 2, what changed and the comment included. Both
are drawn with Pillow, which is not a dependency of plancord: ``.venv/bin/pip install
pillow`` first, then run ``.venv/bin/python docs/render_plan_card.py`` from the repository
root.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from plancord.core.planning import Actor
from plancord.demo import (
    AGENT,
    TASK,
    exploring_turns,
    host_plan_mode,
    plan_messages,
    quiet,
    seed_workspace,
)
from plancord.testing.anthropic_server import text_turn
from plancord.testing.sim import start_world

OUT = Path(__file__).with_name("plan-card.png")
OUT_EDITED = Path(__file__).with_name("plan-card-edited.png")
#: ana's direct edit of step 1 (it now names its file, which widens the plan) and her comment.
EDITED_STEP = {
    "description": "Create greet.py with hello(name) and a docstring",
    "files": "greet.py",
    "risk": ["low"],
    "tools": "create_file",
}
COMMENT = {"step": "2", "comment": "Please say which commit message you will use."}
FONTS = Path("/usr/share/fonts/truetype/dejavu")
BACKGROUND, CARD, TEXT, MUTED = "#313338", "#2b2d31", "#dbdee1", "#949ba4"
RISK_COLOURS = {"🟢": "#3ba55d", "🟡": "#faa81a", "🔴": "#ed4245"}
WIDTH, MARGIN, WRAP = 760, 24, 78


Card = tuple[dict[str, Any], list[list[str]]]
"""A plan message's embed (as Discord's JSON) and its button labels, row by row."""


def card(message: Any) -> Card:
    rows = [
        [child.label for child in getattr(row, "children", []) if getattr(child, "label", None)]
        for row in message.components
    ]
    return message.embeds[0].to_dict(), [row for row in rows if row]


async def plan_cards() -> tuple[Card, Card]:
    """The demo's plan message, and the message of revision 2 after ana's direct edit of
    step 1 and her comment on step 2."""
    with tempfile.TemporaryDirectory() as temp:
        script = [*exploring_turns(), text_turn("The edit is right; I will wait for approval.")]
        world = await start_world(Path(temp), script, plan_mode=host_plan_mode())
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
            first = card(plan_messages(channel)[-1])
            picked = await ana.click(plan_messages(channel)[-1], label="Edit directly")
            shown = await ana.select(picked.response.message, ["1"], custom_id="plan:pick-step:0")
            await ana.submit_modal(shown, EDITED_STEP)
            await env.settle()
            commenting = await ana.click(plan_messages(channel)[-1], label="Comment")
            await ana.submit_modal(commenting, COMMENT)
            await env.settle()
            return first, card(plan_messages(channel)[-1])
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


def draw(embed: dict[str, Any], buttons: list[list[str]]) -> Image.Image:
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
    height = 2 * MARGIN + 22 * len(rows) + 30 + 40 * len(buttons)
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
    styles = {"Approve": "#248046", "Reject": "#da373c"}
    for number, labels in enumerate(buttons):
        x, y = MARGIN, card_bottom + 12 + 40 * number
        for label in labels:
            w = int(pen.textlength(label, font=regular)) + 28
            pen.rounded_rectangle((x, y, x + w, y + 32), 4, fill=styles.get(label, "#4e5058"))
            pen.text((x + 14, y + 7), label, font=regular, fill="#ffffff")
            x += w + 8
    return image


def main() -> None:
    with quiet():
        first, edited = asyncio.run(plan_cards())
    for (embed, buttons), out in ((first, OUT), (edited, OUT_EDITED)):
        draw(embed, buttons).save(out, optimize=True)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
