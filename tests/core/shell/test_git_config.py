"""A repository's config never makes git run a program: one case per program-running key.

Each case first shows that the key does run its program (plain git on the host writes the
marker), then runs the same git command the way an agent's git runs, through the sandbox
with the overrides, in a writable workspace (so only the overrides, not the read-only view,
can keep the marker from being written).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from plancord.core.shell.sandbox import SandboxPolicy, run_sandboxed
from plancord.core.shell.sandbox.git_config import Declared, declared_names, overrides

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
RUN = "{mark}"
#: For programs git talks a protocol with: write the marker, then fail at once.
STOP = "{stop}"


@dataclass(frozen=True)
class Case:
    config: str
    trigger: str
    setup: str = ""
    attributes: str = ""


CASES = {
    "core.fsmonitor": Case(f"[core]\n\tfsmonitor = {RUN}\n", "git status"),
    "hooks": Case(
        "",
        "git commit -q --allow-empty -m x",
        setup=f"mkdir -p .git/hooks && printf '#!/bin/sh\\n{RUN}\\n' > .git/hooks/post-commit "
        "&& chmod +x .git/hooks/post-commit",
    ),
    "core.hooksPath": Case(
        "[core]\n\thooksPath = myhooks\n",
        "git commit -q --allow-empty -m x",
        setup=f"mkdir myhooks && printf '#!/bin/sh\\n{RUN}\\n' > myhooks/pre-commit "
        "&& chmod +x myhooks/pre-commit",
    ),
    "core.editor": Case(f"[core]\n\teditor = {RUN}\n", "git commit -q --allow-empty"),
    "core.sshCommand": Case(
        f"[core]\n\tsshCommand = {STOP}\n", "git fetch -q ssh://example.invalid/repo"
    ),
    "core.gitProxy": Case(
        f"[core]\n\tgitProxy = {STOP}\n", "git fetch -q git://example.invalid/repo"
    ),
    "commit.gpgSign": Case(
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {RUN}\n",
        "git commit -q --allow-empty -m x",
    ),
    "diff.external": Case(
        f"[diff]\n\texternal = {RUN}\n", "git diff", setup="echo changed >> tracked.txt"
    ),
    "diff.<driver>.command": Case(
        f'[diff "x"]\n\tcommand = {RUN}\n',
        "git diff",
        setup="echo changed >> tracked.txt",
        attributes="* diff=x\n",
    ),
    "diff.<driver>.textconv": Case(
        f'[diff "x"]\n\ttextconv = {RUN}\n',
        "git diff",
        setup="echo changed >> tracked.txt",
        attributes="* diff=x\n",
    ),
    "filter.<driver>.clean": Case(
        f'[filter "x"]\n\tclean = {RUN}\n',
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "filter.<driver>.smudge": Case(
        f'[filter "x"]\n\tsmudge = {RUN}\n',
        "git checkout -- tracked.txt",
        setup="rm tracked.txt",
        attributes="* filter=x\n",
    ),
    "filter.<driver>.process": Case(
        f'[filter "x"]\n\tprocess = {RUN}\n',
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "old-style [filter.x] section": Case(
        f"[filter.x]\n\tclean = {RUN}\n",
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "merge.<driver>.driver": Case(
        f'[merge "x"]\n\tdriver = {RUN}\n',
        "git merge -q side",
        setup="git checkout -q -b side && echo side > tracked.txt && git commit -qam side && "
        "git checkout -q main && echo main > tracked.txt && git commit -qam main",
        attributes="* merge=x\n",
    ),
    "remote.<name>.uploadpack": Case(
        f'[remote "up"]\n\turl = ./copy.git\n\tuploadpack = {STOP}\n',
        "git fetch -q up",
        setup="git clone -q --bare . copy.git",
    ),
    "remote.<name>.receivepack": Case(
        f'[remote "up"]\n\turl = ./copy.git\n\treceivepack = {STOP}\n',
        "git push -q up main:other",
        setup="git clone -q --bare . copy.git",
    ),
    "an included file": Case(
        "[include]\n\tpath = ../extra.config\n",
        "git add tracked.txt",
        setup=f"printf '[filter \"x\"]\\n\\tclean = {RUN}\\n' > extra.config "
        "&& echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "a bare repository inside the workspace": Case(
        "",
        "cd evil && git diff --no-index a b",
        setup=f"mkdir -p evil/objects evil/refs/heads && echo 'ref: refs/heads/main' > evil/HEAD "
        f"&& printf '[core]\\n\\tbare = true\\n[diff]\\n\\texternal = {RUN}\\n' > evil/config "
        "&& echo a > evil/a && echo b > evil/b",
    ),
}


def host_git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        **IDENTITY,
    }


def make_repository(root: Path, case: Case) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    env = host_git_env(root)
    mark = workspace / "mark.sh"
    mark.write_text(f"#!/bin/sh\ntouch {workspace}/MARKER\nexec cat\n")
    mark.chmod(0o755)
    stop = workspace / "stop.sh"
    stop.write_text(f"#!/bin/sh\ntouch {workspace}/MARKER\nexit 1\n")
    stop.chmod(0o755)
    setup = case.setup.replace("{mark}", str(mark))
    script = "git init -q -b main && echo one > tracked.txt && git add . && git commit -qm one" + (
        f" && {setup}" if setup else ""
    )
    subprocess.run(["bash", "-c", script], cwd=workspace, env=env, check=True)
    if case.attributes:
        (workspace / ".gitattributes").write_text(case.attributes)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(case.config.replace("{mark}", str(mark)).replace("{stop}", str(stop)))
    return workspace


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_the_program_runs_without_the_overrides_and_not_with_them(
    case: Case, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    plain = make_repository(tmp_path / "plain", case)
    await asyncio.to_thread(
        subprocess.run,
        ["bash", "-c", case.trigger],
        cwd=plain,
        env=host_git_env(tmp_path / "plain"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (plain / "MARKER").exists()

    (tmp_path / "guarded").mkdir()
    guarded = make_repository(tmp_path / "guarded", case)
    policy = SandboxPolicy(workspace=guarded, writable=True)
    result = await run_sandboxed(
        ["bash", "-c", case.trigger], policy, timeout=30, merge_stderr=True, extra_env=IDENTITY
    )
    assert not result.timed_out, result.stdout
    assert not (guarded / "MARKER").exists(), result.stdout


async def test_ordinary_git_still_works_with_the_overrides(tmp_path: Path) -> None:
    workspace = make_repository(tmp_path, Case("", ""))
    (workspace / "tracked.txt").write_text("two\n")
    policy = SandboxPolicy(workspace=workspace, writable=True)
    script = "git diff && git add -A && git commit -qm two && git log --format=%s -p -1"
    result = await run_sandboxed(
        ["bash", "-c", script], policy, timeout=30, merge_stderr=True, extra_env=IDENTITY
    )
    assert result.exit_code == 0, result.stdout
    assert "+two" in result.stdout
    assert result.stdout.count("two") >= 3


def test_declared_names_reads_every_header_spelling(tmp_path: Path) -> None:
    git_dir = tmp_path / ".git"
    git_dir.mkdir()
    (git_dir / "config").write_text(
        '\ufeff[filter "a b"]\n[Diff "X"] textconv = y\n[merge.low]\n'
        '[remote "origin"]\n  url = x\n[diff]\n\texternal = z\n'
    )
    declared = declared_names(tmp_path)
    assert declared.names == {
        "filter": {"a b"},
        "diff": {"X"},
        "merge": {"low"},
        "remote": {"origin"},
    }
    assert declared.external_diff
    assert declared.blocked_protocols == frozenset()
    keys = dict(overrides(tmp_path))
    assert keys["filter.a b.clean"] == ""
    assert keys["diff.X.textconv"] == ""
    assert keys["remote.origin.uploadpack"] == "git-upload-pack"
    assert keys["diff.external"] == ""
    assert keys["safe.bareRepository"] == "explicit"


def test_includes_outside_the_workspace_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.config"
    outside.write_text('[filter "secret-name"]\n')
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    (workspace / ".git" / "config").write_text(f"[include]\n\tpath = {outside}\n")
    assert declared_names(workspace) == Declared()
