"""The Dockerfile, checked without a Docker engine.

The instructions are parsed and held to what the image promises (slim Python base, non-root
user, git and ripgrep, the /data volume, ``plancord run`` and a ``plancord doctor`` health
check). Then the image's install is replayed: the files its COPY lines take from the build
context (minus .dockerignore) are copied to a scratch root, its pip line runs in a fresh
virtual environment, and the installed ``plancord`` runs with the image's environment, so a
change that would leave the image without its migrations or dependencies fails here.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from plancord.config import load_config, parse_config_text
from plancord.storage.migrations import discover

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str

    def exec_form(self) -> list[str]:
        value = json.loads(self.args)
        assert isinstance(value, list), self.args
        return [str(item) for item in value]


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with continuation lines joined; comment lines dropped, as Docker does."""
    instructions: list[Instruction] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        full = pending + line
        pending = ""
        keyword, _, args = full.partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


INSTRUCTIONS = parse_dockerfile(DOCKERFILE.read_text("utf-8"))


def all_of(keyword: str) -> list[Instruction]:
    return [i for i in INSTRUCTIONS if i.keyword == keyword]


def last(keyword: str) -> Instruction:
    found = all_of(keyword)
    assert found, f"the Dockerfile has no {keyword}"
    return found[-1]


def env_of(instruction: Instruction) -> dict[str, str]:
    pairs = shlex.split(instruction.args)
    assert all("=" in pair for pair in pairs), instruction.args
    return dict(pair.split("=", 1) for pair in pairs)


def image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction in all_of("ENV"):
        env.update(env_of(instruction))
    return env


def healthcheck_command() -> list[str]:
    _, _, command = last("HEALTHCHECK").args.partition("CMD ")
    assert command, "HEALTHCHECK has no CMD"
    return Instruction("CMD", command).exec_form()


def baked_config() -> tuple[PurePosixPath, str]:
    """The config file a RUN line writes with printf: its path and its text."""
    for instruction in all_of("RUN"):
        match = re.search(r"printf '([^']*)' > (/\S+)", instruction.args)
        if match:
            text = match.group(1).encode().decode("unicode_escape")
            return PurePosixPath(match.group(2)), text
    raise AssertionError("no RUN line writes the image's config file")


def ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text("utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(relative: PurePosixPath, patterns: list[str]) -> bool:
    """Roughly Docker's rule: a pattern matches a path or any of its leading directories;
    ``**/`` matches at any depth."""
    parts = relative.parts
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    for pattern in patterns:
        if pattern.startswith("**/"):
            tail = pattern[3:]
            if any(fnmatch.fnmatchcase(part, tail) for part in parts):
                return True
        elif any(fnmatch.fnmatchcase(prefix, pattern) for prefix in prefixes):
            return True
    return False


def context_files(source: str) -> Iterator[tuple[Path, PurePosixPath]]:
    """Files of ``source`` in the build context that survive .dockerignore, with their path
    relative to ``source`` (empty for a single file)."""
    patterns = ignore_patterns()
    base = ROOT / source
    if base.is_file():
        if not ignored(PurePosixPath(source), patterns):
            yield base, PurePosixPath()
        return
    for path in sorted(base.rglob("*")):
        relative = PurePosixPath(path.relative_to(ROOT).as_posix())
        if path.is_file() and not ignored(relative, patterns):
            yield path, PurePosixPath(path.relative_to(base).as_posix())


def test_base_image_is_slim_python_the_project_supports() -> None:
    froms = all_of("FROM")
    # An exact Debian release: the bare python:3.11-slim tag moved to Debian 13 in 2025.
    assert [f.args for f in froms] == ["python:3.11-slim-bookworm"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    assert pyproject["project"]["requires-python"] == ">=3.11"


def test_runs_as_a_non_root_user_it_creates() -> None:
    user = last("USER").args.split(":")[0]
    assert user not in ("root", "0", "")
    created = " ".join(i.args for i in all_of("RUN"))
    assert re.search(rf"useradd\b[^&]*\b{re.escape(user)}\b", created)
    assert INSTRUCTIONS.index(last("USER")) > INSTRUCTIONS.index(last("RUN"))


def test_apt_installs_git_and_ripgrep_lean() -> None:
    apt = [i.args for i in all_of("RUN") if "apt-get install" in i.args]
    assert len(apt) == 1
    words = apt[0].split()
    assert {"git", "ripgrep", "bubblewrap", "--no-install-recommends", "-y"} <= set(words)
    assert "apt-get update" in apt[0]
    assert "rm -rf /var/lib/apt/lists/*" in apt[0]


def test_the_data_volume_is_where_the_config_points() -> None:
    volumes = [v for i in all_of("VOLUME") for v in i.exec_form()]
    assert volumes == ["/data"]
    path, text = baked_config()
    config = parse_config_text(text, source=str(path), base_dir=Path("/nonexistent"))
    assert config.data_dir == Path("/data")
    assert config.database_path == Path("/data/plancord.db")
    user = last("USER").args
    assert any(f"chown {user}:{user} /data" in i.args for i in all_of("RUN"))
    # Private to the bot's user, as plancord makes a data directory itself (doctor warns
    # on anything wider).
    assert any("chmod 700 /data" in i.args for i in all_of("RUN"))


def test_the_compiler_leaves_the_image_once_the_helpers_are_built() -> None:
    builds = [i.args for i in all_of("RUN") if "python -m plancord.sandbox" in i.args]
    assert len(builds) == 1
    assert "apt-get purge -y --auto-remove gcc libc6-dev" in builds[0]


def test_a_mounted_example_config_keeps_its_data_in_the_volume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README says to mount your own config over the baked one; the example's relative
    ``data_dir`` would resolve beside it, outside the volume, but the image's environment
    points the data directory at the volume."""
    mounted = tmp_path / "etc" / "plancord" / "config.yaml"
    mounted.parent.mkdir(parents=True)
    shutil.copy(ROOT / "config.example.yaml", mounted)
    for key, value in image_env().items():
        monkeypatch.setenv(key, value)
    config = load_config(mounted)
    assert config.data_dir == Path("/data")
    assert config.database_path == Path("/data/plancord.db")


def test_the_command_is_plancord_run_with_the_baked_config() -> None:
    assert not all_of("ENTRYPOINT")
    command = last("CMD").exec_form()
    path, _ = baked_config()
    assert command == ["plancord", "run", "--config", str(path)]
    assert last("WORKDIR").args == str(path.parent)


def test_the_health_check_is_plancord_doctor() -> None:
    path, _ = baked_config()
    assert healthcheck_command() == ["plancord", "doctor", "--config", str(path)]
    assert "--timeout=" in last("HEALTHCHECK").args


def test_migrations_ship_inside_the_package_not_beside_it() -> None:
    assert "PLANCORD_MIGRATIONS_DIR" not in image_env()
    assert not any(i.args.split()[0] == "migrations" for i in all_of("COPY"))


def test_pip_installs_the_project_without_a_cache() -> None:
    pip = [i.args for i in all_of("RUN") if "pip install" in i.args]
    assert pip == ["pip install --no-cache-dir ."]


def test_dockerignore_keeps_state_and_caches_out_but_not_the_sources() -> None:
    patterns = ignore_patterns()
    for path in (
        ".venv/bin/python",
        ".git/HEAD",
        "data/plancord.db",
        "src/plancord/__pycache__/cli.cpython-311.pyc",
        "src/plancord.egg-info/PKG-INFO",
        ".mypy_cache/x",
        ".pytest_cache/x",
        ".ruff_cache/x",
        "state/plancord.db",
        "config.yaml",
        ".env",
    ):
        assert ignored(PurePosixPath(path), patterns), path
    for instruction in all_of("COPY"):
        *sources, _ = instruction.args.split()
        for source in sources:
            assert list(context_files(source)), f"COPY {source} would copy nothing"
    for path in (
        "src/plancord/command/main.py",
        "src/plancord/migrations/0001_init.sql",
        "pyproject.toml",
    ):
        assert not ignored(PurePosixPath(path), patterns), path


def build_root(root: Path) -> None:
    """Copy what the COPY lines take from the build context into ``root``, the image's /."""
    workdir = PurePosixPath("/")
    for instruction in INSTRUCTIONS:
        if instruction.keyword == "WORKDIR":
            workdir = workdir / instruction.args
            (root / workdir.relative_to("/")).mkdir(parents=True, exist_ok=True)
        if instruction.keyword != "COPY":
            continue
        *sources, destination = instruction.args.split()
        target = workdir / destination
        for source in sources:
            for path, relative in context_files(source):
                if relative == PurePosixPath():
                    dest = root / target.relative_to("/") / Path(source).name
                else:
                    dest = root / target.relative_to("/") / relative
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)


def in_root(root: Path, value: str) -> str:
    return str(root / value.lstrip("/")) if value.startswith("/") else value


def test_a_plain_install_migrates_passes_doctor_and_runs_the_demo(tmp_path: Path) -> None:
    root = tmp_path / "image"
    root.mkdir()
    build_root(root)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    bin_dir = venv / "bin"
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    base_env["PATH"] = f"{bin_dir}{os.pathsep}{base_env.get('PATH', os.defpath)}"
    base_env["VIRTUAL_ENV"] = str(venv)

    env = dict(base_env)
    workdir = PurePosixPath("/")
    ran_pip = False
    for instruction in INSTRUCTIONS:
        if instruction.keyword == "WORKDIR":
            workdir = workdir / instruction.args
        elif instruction.keyword == "ENV":
            env.update({k: in_root(root, v) for k, v in env_of(instruction).items()})
        elif instruction.keyword == "RUN" and "pip install" in instruction.args:
            done = subprocess.run(
                ["bash", "-c", instruction.args],
                cwd=root / workdir.relative_to("/"),
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            ran_pip = True
    assert ran_pip

    plancord = str(bin_dir / "plancord")
    work = tmp_path / "work"
    work.mkdir()

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*args],
            cwd=work,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    where = run(str(bin_dir / "python"), "-c", "import plancord; print(plancord.__file__)")
    assert where.stdout.startswith(str(venv)), where.stdout + where.stderr

    assert run(plancord, "--help").returncode == 0
    config = work / "config.yaml"
    config.write_text(f"data_dir: {work / 'data'}\nplan_mode:\n  shell_sandbox: off\n")
    latest = discover()[-1].version

    migrated = run(plancord, "migrate", "--config", str(config))
    assert migrated.returncode == 0, migrated.stderr
    assert f"migrated from version 0 to {latest}" in migrated.stdout

    doctor = run(
        plancord, "doctor", "--config", str(config), DISCORD_TOKEN="x", ANTHROPIC_API_KEY="y"
    )
    assert doctor.returncode == 0, doctor.stdout
    installed = venv / "lib"
    assert f"ok  migrations: newest version {latest}, in {installed}" in doctor.stdout
    assert f"schema version {latest} (newest)" in doctor.stdout

    version = run(plancord, "--version")
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("plancord ")

    demo = run(plancord, "demo", TMPDIR=str(work))
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert demo.stderr == ""
    assert "Plan: Add a greeting module" in demo.stdout
