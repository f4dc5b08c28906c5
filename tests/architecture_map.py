"""The map in ``docs/architecture.md`` made from the code: the package's floors as the
import-linter contracts in ``pyproject.toml`` state them, and the Discord edge's floors with
the imports between its rooms as they are today.

``tests/test_architecture.py`` fails when the page's generated parts differ from what this
makes; ``python -m tests.architecture_map`` writes them anew after a room or a contract
changed. What each room holds is said once, below; a floor the contracts gain without a
line here fails the test too.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"

ROOMS = {
    "plancord.command": "the `plancord` command and the operator's shell: `run`, `migrate`, "
    "`doctor`, `demo`, `sandbox-run`, the `plan`, `agents`, `asks`, `rules`, `calls` and "
    "`audit` commands, and the operator's view of the store they act through (its own floors: "
    "*contract*)",
    "plancord.demo": "the offline demo's story and its narration",
    "plancord.testing": "the SimCord world and the fake Messages API; only the demo and the "
    "tests import it (*contract*)",
    "plancord.discord_bot": "the Discord edge (its floors below)",
    "plancord.doctor": "the checks of a host",
    "plancord.app": "the one wiring place: builds every collaborator once (the store, the "
    "planning service, the runtime's parts, the scheduler) from a config, registers the "
    "planning listeners in one stated order, and gives the edges what they use as named "
    "members",
    "plancord.agent": "the runtime: the tool loop, turns, interruptions, budgets, execution "
    "on a branch, the tools (`agent/tools/`)",
    "plancord.metrics": "the optional Prometheus endpoint: one registry per app, read on the "
    "loop at each scrape, served from its own thread",
    "plancord.llm": "the Anthropic client",
    "plancord.storage": "the store on SQLite or PostgreSQL",
    "plancord.process": "the bot process itself: its data directory checked before it "
    "connects, secrets kept, the garbage collector tuned, an init as PID 1",
    "plancord.sandbox": "the sandbox every agent process starts in (it spawns processes, so "
    "it is not the domain; the core never imports it: *contract*)",
    "plancord.config": "the YAML config as pydantic models; secrets from the environment or "
    "`*_FILE`",
    "plancord.core": "the domain: plans, the planning state machine, the authority, the gate, "
    "the ports; `core/shell/` is the read-only filter; `core/sandbox_policy.py` is what a "
    "sandboxed process may reach, as a value. Imports no sandbox, Discord, database driver, "
    "Anthropic or HTTP code (*contract*)",
}
"""What lives in each room of the package's layers contract."""

EDGE_ROOMS = {
    "bot": "the wiring: opens the app, builds the notifier, loads the cogs, registers the "
    "persistent buttons",
    "notifier": "the Notifier port on Discord; builds the cards and the asks",
    "cogs": "`/plan`, `/agent` and the message listener: parse, call the app, render",
    "plan_card": "the plan message and everything that happens to it",
    "asks": "what an agent puts to a human and waits on",
    "result_card": "the completion card: an execution's result, decided by a human",
    "shared": "what every part uses to speak to a channel",
}
"""What lives in each room of the Discord edge's floors contract."""

_BEGIN = "<!-- {name}: made by `python -m tests.architecture_map`; do not edit by hand -->"
_END = "<!-- end of {name} -->"


def _contracts() -> list[dict[str, object]]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts: list[dict[str, object]] = data["tool"]["importlinter"]["contracts"]
    return contracts


def _layers(containers: list[str] | None) -> list[list[str]]:
    for contract in _contracts():
        if contract["type"] == "layers" and contract.get("containers") == containers:
            layers = contract["layers"]
            assert isinstance(layers, list)
            return [[room.strip() for room in layer.split("|")] for layer in layers]
    raise LookupError(f"no layers contract with containers {containers}")


def _room(text: str, words: dict[str, str]) -> str:
    if text not in words:
        raise LookupError(f"{text} is on a floor of the contracts but has no words here")
    return words[text]


def package_floors() -> str:
    lines = ["| floor | rooms | what lives there |", "|---|---|---|"]
    for number, layer in enumerate(_layers(None), start=1):
        names = ", ".join(f"`{room.removeprefix('plancord.')}`" for room in layer)
        what = "; ".join(_room(room, ROOMS) for room in layer)
        lines.append(f"| {number} | {names} | {what} |")
    return "\n".join(lines)


def _edge_imports() -> dict[str, set[str]]:
    graph = grimp.build_graph("plancord")
    rooms = set(EDGE_ROOMS)

    def room_of(module: str) -> str | None:
        parts = module.split(".")
        inside = len(parts) > 2 and parts[1] == "discord_bot" and parts[2] in rooms
        return parts[2] if inside else None

    arrows: dict[str, set[str]] = {room: set() for room in rooms}
    for module in graph.modules:
        source = room_of(module)
        if source is None:
            continue
        for target in map(room_of, graph.find_modules_directly_imported_by(module)):
            if target is not None and target != source:
                arrows[source].add(target)
    return arrows


def edge_floors() -> str:
    layers = _layers(["plancord.discord_bot"])
    order = [room for layer in layers for room in layer]
    arrows = _edge_imports()
    lines = ["| floor | room | what lives there | imports |", "|---|---|---|---|"]
    for number, layer in enumerate(layers, start=1):
        for room in layer:
            imports = ", ".join(f"`{t}`" for t in sorted(arrows[room], key=order.index)) or "—"
            lines.append(f"| {number} | `{room}` | {_room(room, EDGE_ROOMS)} | {imports} |")
    return "\n".join(lines)


SOURCE = ROOT / "src" / "plancord"


def _first_sentence(docstring: str) -> str:
    paragraph = " ".join(docstring.split("\n\n")[0].split())
    ends = re.search(r"(?<=[a-z)`'\"])\.(?=\s|$)", paragraph)
    return paragraph[: ends.start() + 1] if ends else paragraph


def module_index() -> str:
    """Every module of the package, folder by folder, with the first sentence of its
    docstring: a module added without a line here, or a line left for a module that is
    gone, makes the page stale."""
    folders: dict[str, list[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        said = _first_sentence(docstring)
        if not said and relative.name == "__init__.py":
            continue
        if not said:
            raise LookupError(f"{relative} has no docstring to say what it holds")
        folder = str(relative.parent) if relative.parent != Path(".") else "plancord"
        folders.setdefault(folder, []).append(f"- `{relative}`: {said}")
    blocks = [f"**{folder}/**\n\n" + "\n".join(lines) for folder, lines in folders.items()]
    return "\n\n".join(blocks)


PARTS = {
    "package floors": package_floors,
    "edge floors": edge_floors,
    "every module": module_index,
}


def _span(name: str) -> re.Pattern[str]:
    begin, end = _BEGIN.format(name=name), _END.format(name=name)
    return re.compile(re.escape(begin) + r"\n(?:(.*?)\n)?" + re.escape(end), re.DOTALL)


def stale_parts(page: str) -> list[str]:
    """The generated parts of ``page`` that differ from what the code makes now (or are
    missing)."""
    stale = []
    for name, make in PARTS.items():
        found = _span(name).search(page)
        if found is None or found.group(1) != make():
            stale.append(name)
    return stale


def rewritten(page: str) -> str:
    for name, make in PARTS.items():
        block = f"{_BEGIN.format(name=name)}\n{make()}\n{_END.format(name=name)}"
        page, count = _span(name).subn(block.replace("\\", "\\\\"), page)
        if count != 1:
            raise LookupError(f"docs/architecture.md has no place marked for the {name}")
    return page


if __name__ == "__main__":
    PAGE.write_text(rewritten(PAGE.read_text()))
    sys.exit(0)
