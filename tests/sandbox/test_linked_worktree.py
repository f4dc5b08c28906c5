"""Which git directory a workspace's ``.git`` file may lead to: git's answer, and only for a
worktree the repository itself lists."""

from __future__ import annotations

import subprocess
from pathlib import Path

from plancord.sandbox.linked_worktree import git_dir_of


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


def _repository(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(
        path,
        "-c",
        "user.name=h",
        "-c",
        "user.email=h@h",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "1",
    )
    return path


def test_a_linked_worktree_gets_the_git_directory_git_names(tmp_path: Path) -> None:
    repository = _repository(tmp_path / "site")
    git(repository, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    found = git_dir_of(tmp_path / "feature")
    assert found == (repository / ".git" / "worktrees" / "feature").resolve()


def test_a_git_file_the_repository_does_not_list_leads_nowhere(tmp_path: Path) -> None:
    repository = _repository(tmp_path / "site")
    git(repository, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "feature"))
    forged = tmp_path / "agent"
    forged.mkdir()
    worktree_dir = repository / ".git" / "worktrees" / "feature"
    (forged / ".git").write_text(f"gitdir: {worktree_dir}\n")
    assert git_dir_of(forged) is None
    (forged / ".git").write_text(f"gitdir: {repository / '.git'}\n")
    assert git_dir_of(forged) is None


def test_a_workspace_with_a_git_directory_or_none_has_no_linked_git_dir(tmp_path: Path) -> None:
    assert git_dir_of(_repository(tmp_path / "plain")) is None
    (tmp_path / "empty").mkdir()
    assert git_dir_of(tmp_path / "empty") is None
