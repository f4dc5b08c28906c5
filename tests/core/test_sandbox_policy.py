"""A sandbox policy says its mode once: the named constructors give the three modes, and a
policy that is both writable and behind the read-only inner wall cannot be written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from plancord.core.sandbox_policy import (
    HOST_NETWORK,
    OFFLINE,
    LayerChoice,
    Limits,
    Proxied,
    SandboxPolicy,
    SandboxSettings,
    WorkspaceAccess,
)

WORKSPACE = Path("/data/agents/ada/workspace")
SETTINGS = SandboxSettings(
    layer=LayerChoice.BUBBLEWRAP,
    limits=Limits(processes=9),
    network_agents=frozenset({"ada"}),
    shared=(Path("/srv/remote.git"),),
)


def test_each_constructor_names_its_mode() -> None:
    executing = SandboxPolicy.executing(WORKSPACE, network=HOST_NETWORK)
    read_only = SandboxPolicy.read_only(WORKSPACE)
    walled = SandboxPolicy.read_only(WORKSPACE).behind_inner_wall()
    assert (executing.access, executing.writable, executing.inner_wall) == (
        WorkspaceAccess.WRITABLE,
        True,
        False,
    )
    assert (read_only.access, read_only.writable, read_only.inner_wall) == (
        WorkspaceAccess.READ_ONLY,
        False,
        False,
    )
    assert (walled.access, walled.writable, walled.inner_wall) == (
        WorkspaceAccess.WALLED,
        False,
        True,
    )
    assert executing.network == HOST_NETWORK
    assert read_only.network == walled.network == OFFLINE


def test_writable_behind_the_inner_wall_cannot_be_written() -> None:
    with pytest.raises(TypeError):
        SandboxPolicy(workspace=WORKSPACE, writable=True, inner_wall=True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        SandboxPolicy.read_only(WORKSPACE, network=HOST_NETWORK)  # type: ignore[call-arg]


def test_behind_the_inner_wall_a_policy_is_read_only_and_offline() -> None:
    walled = SandboxPolicy.executing(WORKSPACE, network=HOST_NETWORK).behind_inner_wall()
    assert (walled.access, walled.writable, walled.network) == (
        WorkspaceAccess.WALLED,
        False,
        OFFLINE,
    )


def test_the_network_is_one_value_a_socket_only_when_proxied() -> None:
    proxied = SandboxSettings(
        plan_network=frozenset({"ada"}), proxy_dir=Path("/data/network")
    ).executing("ada", WORKSPACE)
    assert proxied.network == Proxied(Path("/data/network/ada.sock"))
    assert not proxied.has_host_network
    assert proxied.for_host_git().network == OFFLINE
    assert SETTINGS.executing("ada", WORKSPACE).for_host_git().network == HOST_NETWORK
    assert SETTINGS.executing("ada", WORKSPACE).for_push(None).network == HOST_NETWORK
    assert SETTINGS.executing("ada", WORKSPACE).for_push(Path("/srv/r.git")).network == OFFLINE


def test_the_mode_is_one_field_so_writable_and_walled_are_never_both_true() -> None:
    for access in WorkspaceAccess:
        policy = SandboxPolicy(WORKSPACE, access)
        assert not (policy.writable and policy.inner_wall)


def test_the_settings_fill_in_the_operators_layer_limits_and_shared_paths() -> None:
    for policy in (
        SETTINGS.executing("ada", WORKSPACE),
        SETTINGS.read_only(WORKSPACE),
        SETTINGS.walled(WORKSPACE),
        SETTINGS.host_git("ada", WORKSPACE),
    ):
        assert policy.workspace == WORKSPACE
        assert policy.layer is LayerChoice.BUBBLEWRAP
        assert policy.limits == Limits(processes=9)
        assert policy.shared == (Path("/srv/remote.git"),)


def test_the_network_is_only_for_named_agents_and_only_when_executing() -> None:
    assert SETTINGS.executing("ada", WORKSPACE).network == HOST_NETWORK
    assert SETTINGS.executing("bob", WORKSPACE).network == OFFLINE
    assert SETTINGS.read_only(WORKSPACE).network == OFFLINE
    assert SETTINGS.walled(WORKSPACE).network == OFFLINE


def test_the_host_git_policy_is_the_executing_one_with_git_writable() -> None:
    host_git = SETTINGS.host_git("ada", WORKSPACE)
    assert host_git.git_writable
    assert dataclasses.replace(host_git, git_writable=False) == SETTINGS.executing("ada", WORKSPACE)
    assert not SETTINGS.executing("ada", WORKSPACE).git_writable


def test_a_policy_for_reading_keeps_the_walls_but_drops_writes_network_and_the_wall() -> None:
    reading = SETTINGS.host_git("ada", WORKSPACE).for_reading()
    assert reading.access is WorkspaceAccess.READ_ONLY
    assert reading.network == OFFLINE
    assert reading.shared == SETTINGS.shared
    assert SETTINGS.walled(WORKSPACE).for_reading().access is WorkspaceAccess.READ_ONLY
