"""A ``.git`` written below the workspace's top is found among a call's paths, and refused
under every drift policy."""

from __future__ import annotations

import pytest

from plancord.core.drift import DriftPolicy
from plancord.core.drift_findings import (
    NESTED_GIT_REASON,
    DriftAction,
    DriftFinding,
    FindingKind,
    drift_action,
    nested_git_paths,
)


def test_a_nested_git_and_what_it_holds_are_found_not_the_workspaces_own() -> None:
    paths = (".git/HEAD", "sub/.git", "sub/.git/commondir", "a/b/.git", "x.git", "sub/git")

    assert nested_git_paths(paths) == ("sub/.git", "sub/.git/commondir", "a/b/.git")


@pytest.mark.parametrize("policy", list(DriftPolicy))
def test_a_written_git_directory_is_refused_whatever_the_policy(policy: DriftPolicy) -> None:
    finding = DriftFinding(FindingKind.GIT_DIRECTORY, NESTED_GIT_REASON, ("sub/.git",))

    assert drift_action(finding, policy) is DriftAction.REFUSE
