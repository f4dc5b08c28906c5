from __future__ import annotations

import pytest
from pydantic import ValidationError

from plancord.core.gate import Permission, ToolKind
from plancord.core.permissions import PermissionProfile, Preset, action_string

M, R = ToolKind.MUTATING, ToolKind.READ_ONLY


def test_action_strings_are_one_line() -> None:
    assert (
        action_string("bash_execute", "git push\n  origin main")
        == "tool:bash_execute:git push origin main"
    )


E = True
"""The tool declares itself a workspace edit (``Tool.workspace_edit``)."""


@pytest.mark.parametrize(
    ("preset", "action", "kind", "edit", "expected"),
    [
        (Preset.OPEN, "tool:git_push:origin main", M, False, Permission.ALLOW),
        (Preset.STANDARD, "tool:view:README.md", R, False, Permission.ALLOW),
        (Preset.STANDARD, "tool:create_file:a.py", M, E, Permission.ALLOW),
        (Preset.STANDARD, "tool:str_replace:a.py", M, E, Permission.ALLOW),
        (Preset.STANDARD, "tool:bash_execute:make", M, False, Permission.ASK),
        (Preset.STANDARD, "tool:git_commit:commit x", M, False, Permission.ASK),
        (Preset.STANDARD, "tool:git_push:origin main", M, False, Permission.ASK),
        (Preset.STANDARD, "tool:self_edit_system_prompt:x", M, False, Permission.ASK),
        # The name is not the declaration: a tool that does not declare itself a workspace
        # edit asks, whatever it is called.
        (Preset.STANDARD, "tool:create_file:a.py", M, False, Permission.ASK),
        (Preset.LOCKED, "tool:view:x", R, False, Permission.ALLOW),
        (Preset.LOCKED, "tool:create_file:x", M, E, Permission.DENY),
        (Preset.CUSTOM, "tool:create_file:x", M, E, Permission.ASK),
        (Preset.CUSTOM, "tool:view:x", R, False, Permission.ALLOW),
    ],
)
def test_presets(
    preset: Preset, action: str, kind: ToolKind, edit: bool, expected: Permission
) -> None:
    profile = PermissionProfile(preset=preset)
    assert profile.evaluate(action, kind, workspace_edit=edit) is expected


def test_read_only_shell_counts_as_a_read() -> None:
    locked = PermissionProfile(preset=Preset.LOCKED)
    assert locked.evaluate("tool:bash_execute:ls", M, read_only_shell=True) is Permission.ALLOW
    assert locked.evaluate("tool:bash_execute:rm x", M) is Permission.DENY


def test_custom_lists_fullmatch_deny_first() -> None:
    profile = PermissionProfile(
        preset=Preset.OPEN,
        allow=(r"tool:bash_execute:git push origin feature/.*",),
        ask=(r"tool:bash_execute:git push.*",),
        deny=(r"tool:bash_execute:git push origin main",),
    )
    assert profile.evaluate("tool:bash_execute:git push origin main", M) is Permission.DENY
    assert profile.evaluate("tool:bash_execute:git push origin feature/x", M) is Permission.ASK
    assert profile.evaluate("tool:bash_execute:git push origin mainline", M) is Permission.ASK
    assert profile.evaluate("tool:bash_execute:echo git push origin main", M) is Permission.ALLOW


def test_allow_list_overrides_the_preset() -> None:
    profile = PermissionProfile(preset=Preset.LOCKED, allow=(r"tool:create_file:docs/.*",))
    assert profile.evaluate("tool:create_file:docs/a.md", M) is Permission.ALLOW
    assert profile.evaluate("tool:create_file:src/a.py", M) is Permission.DENY


def test_bad_patterns_are_rejected() -> None:
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        PermissionProfile(deny=("(unclosed",))


def test_stored_profiles_round_trip() -> None:
    profile = PermissionProfile(preset=Preset.CUSTOM, ask=("tool:.*",))
    assert PermissionProfile.from_stored(profile.model_dump(mode="json")) == profile
    assert PermissionProfile.from_stored(None) == PermissionProfile()
