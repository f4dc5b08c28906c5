"""An agent's home is one value: its workspace, the host's folders beside it, its sandbox
policies and its branch all come from it, so no part builds them differently."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.agent.home import AgentHomes
from plancord.agent.host_io.git_run import run_git
from plancord.agent.workspace import init_workspace
from plancord.config.model import Config
from plancord.core.sandbox_policy import LayerChoice, SandboxSettings, WorkspaceAccess

SETTINGS = SandboxSettings(
    layer=LayerChoice.BUBBLEWRAP, network_agents=frozenset({"ada"}), shared=(Path("/srv/r"),)
)


def test_the_folders_of_a_home_live_under_the_agents_folder() -> None:
    home = AgentHomes(Path("/data/agents"), SETTINGS).of("ada")
    assert home.root == Path("/data/agents/ada")
    assert home.workspace == Path("/data/agents/ada/workspace")
    assert {home.observed, home.kept, home.results} == {
        Path("/data/agents/ada/observed"),
        Path("/data/agents/ada/kept"),
        Path("/data/agents/ada/results"),
    }
    assert home.workspace not in (home.observed, home.kept, home.results)


def test_the_config_names_the_agents_folder_under_the_data_directory(tmp_path: Path) -> None:
    config = Config(data_dir=tmp_path)
    assert config.agents_dir == tmp_path / "agents"


def test_every_policy_of_a_home_is_of_its_workspace_under_the_operators_settings() -> None:
    home = AgentHomes(Path("/data/agents"), SETTINGS).of("ada")
    policies = {
        "executing": home.executing_policy,
        "read_only": home.read_only_policy,
        "walled": home.walled_policy,
        "host_git": home.host_git_policy,
    }
    assert {p.workspace for p in policies.values()} == {home.workspace}
    assert {p.layer for p in policies.values()} == {LayerChoice.BUBBLEWRAP}
    assert {p.shared for p in policies.values()} == {(Path("/srv/r"),)}
    assert [p.access for p in policies.values()] == [
        WorkspaceAccess.WRITABLE,
        WorkspaceAccess.READ_ONLY,
        WorkspaceAccess.WALLED,
        WorkspaceAccess.WRITABLE,
    ]
    assert [p.git_writable for p in policies.values()] == [False, False, False, True]
    assert home.executing_policy.has_host_network
    assert (
        not AgentHomes(Path("/data/agents"), SETTINGS).of("bob").executing_policy.has_host_network
    )


@pytest.fixture
def agents_dir(tmp_path: Path) -> Path:
    return tmp_path.resolve() / "agents"


async def test_the_branch_keeps_ignored_files_in_the_home_not_the_workspace(
    agents_dir: Path,
) -> None:
    home = AgentHomes(agents_dir).of("ada")
    await init_workspace(home.workspace, "ada")
    (home.workspace / ".gitignore").write_text(".env\n")
    await run_git(home.host_git_policy, "add", ".gitignore")
    await run_git(home.host_git_policy, "commit", "-qm", "ignore .env", "--no-verify")
    (home.workspace / ".env").write_text("TOKEN=reviewed\n")
    started = await home.branch.start("plan-1", 1)
    kept = sorted(p.name for p in home.kept.rglob("*") if p.is_file())
    assert kept, "the ignored file was kept in the home"
    (home.workspace / ".env").write_text("TOKEN=changed\n")
    await home.branch.discard(started)
    assert (home.workspace / ".env").read_text() == "TOKEN=reviewed\n"
