"""The package's shape is checked, not hoped for: no import circles anywhere in ``src/``, and
the import-linter contracts hold today and break when a layer is crossed."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

from tests import architecture_map

ROOT = Path(__file__).resolve().parents[1]


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles_anywhere() -> None:
    graph = grimp.build_graph("plancord", include_external_packages=False)
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "circlepkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circlepkg import b\n")
    (package / "b.py").write_text("from circlepkg import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circlepkg", include_external_packages=False)
    assert _circles(graph) == [["circlepkg.a", "circlepkg.b"]]


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(Path(sys.executable).parent / "lint-imports"),
            "--config",
            str(root / "pyproject.toml"),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(root / "src"), "PATH": "/usr/bin:/bin"},
    )


def test_the_contracts_hold() -> None:
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        ("storage/db.py", "import plancord.agent.manager", "Layers"),
        ("core/plan.py", "import plancord.storage.store", "The domain core"),
        ("agent/runtime.py", "import plancord.testing.sim", "The simulated world"),
        ("discord_bot/shared/client.py", "import plancord.discord_bot.cogs.plan", "Discord edge"),
        ("discord_bot/cogs/plan.py", "import plancord.discord_bot.notifier", "Discord edge"),
        ("discord_bot/plan_card/message.py", "import plancord.discord_bot.asks.live", "peers"),
        ("discord_bot/asks/live.py", "import plancord.discord_bot.plan_card.edits", "peers"),
        ("discord_bot/plan_card/review.py", "import plancord.storage.backend", "edge and the demo"),
        ("demo/narration.py", "import plancord.storage.engines", "edge and the demo"),
    ],
)
def test_each_contract_breaks_when_its_rule_is_broken(
    tmp_path: Path, module: str, line: str, contract: str
) -> None:
    copy = tmp_path / "project"
    shutil.copytree(ROOT / "src", copy / "src")
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    target = copy / "src" / "plancord" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert f"{contract}" in result.stdout
    assert "BROKEN" in result.stdout


def test_the_map_is_made_from_the_contracts_and_the_imports() -> None:
    """docs/architecture.md's floors are what ``python -m tests.architecture_map`` makes
    today: run it after a room or a contract changed."""
    assert architecture_map.stale_parts(architecture_map.PAGE.read_text()) == []


def test_the_map_goes_stale_when_a_contract_or_an_import_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = architecture_map.PAGE.read_text()
    made = architecture_map.edge_floors()
    real = architecture_map._edge_imports

    def one_more_import() -> dict[str, set[str]]:
        arrows = real()
        arrows["asks"].add("result_card")
        return arrows

    monkeypatch.setattr(architecture_map, "_edge_imports", one_more_import)
    assert architecture_map.edge_floors() != made
    assert architecture_map.stale_parts(page) == ["edge floors"]
    monkeypatch.undo()

    monkeypatch.setitem(architecture_map.ROOMS, "plancord.core", "the domain, said otherwise")
    assert architecture_map.stale_parts(page) == ["package floors"]
    monkeypatch.delitem(architecture_map.ROOMS, "plancord.core")
    with pytest.raises(LookupError, match=r"plancord\.core is on a floor"):
        architecture_map.package_floors()


def test_the_discord_edge_builds_no_store_and_reads_no_database() -> None:
    """Every store the edge uses is one of ``App``'s named members, built once: no edge
    module names a database (``app.db``, ``store.db``) or builds a ``...Store`` itself."""
    found = []
    for path in sorted((ROOT / "src" / "plancord" / "discord_bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and node.attr == "db":
                found.append(f"{where} reads .db")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id.endswith("Store")
            ):
                found.append(f"{where} builds {node.func.id}")
    assert found == []


def test_the_module_index_goes_stale_when_a_module_comes_or_goes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A module written without a line in the page's index, or one removed with its line
    left, makes the page stale; so does a module with nothing to say about itself."""
    page = architecture_map.PAGE.read_text()
    source = tmp_path / "plancord"
    shutil.copytree(architecture_map.SOURCE, source, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(architecture_map, "SOURCE", source)
    assert architecture_map.stale_parts(page) == []

    (source / "core" / "newcomer.py").write_text('"""A concept the page does not name yet."""\n')
    assert architecture_map.stale_parts(page) == ["every module"]
    (source / "core" / "newcomer.py").unlink()

    (source / "core" / "places.py").unlink()
    assert architecture_map.stale_parts(page) == ["every module"]

    (source / "core" / "silent.py").write_text("VALUE = 1\n")
    with pytest.raises(LookupError, match=r"core/silent\.py has no docstring"):
        architecture_map.module_index()


_NAMED_FILE = re.compile(r"`((?:[\w.-]+/)*[\w-]+\.(?:py|c|sql|md|yaml|toml))`")


def test_every_file_the_map_names_exists() -> None:
    """A file docs/architecture.md names in backticks is in the package, the tests, the
    benchmarks, the docs or the checkout's root: a rename that leaves the prose behind
    fails here."""
    root = architecture_map.ROOT
    source = architecture_map.SOURCE
    bases = [
        source,
        source / "discord_bot",
        root,
        root / "tests",
        root / "docs",
        root / "benchmarks",
    ]
    everything = {
        path.name for base in (architecture_map.SOURCE, root / "tests") for path in base.rglob("*")
    }
    gone = []
    for name in sorted(set(_NAMED_FILE.findall(architecture_map.PAGE.read_text()))):
        if "/" in name:
            found = any((base / name).exists() for base in bases)
        else:
            found = name in everything or any((base / name).exists() for base in bases)
        if not found:
            gone.append(name)
    assert gone == []
