"""Permission profiles: what an agent may do outside plan mode, decided on action strings.

An action string names one concrete call, ``tool:<name>:<detail>`` — for example
``tool:bash_execute:git push origin main`` or ``tool:create_file:src/app.py``. Custom lists are
regular expressions matched against the whole string (fullmatch), deny first, then ask, then
allow; what no list matches falls to the preset.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from plancord.core.kinds import Permission, ToolKind


class Preset(StrEnum):
    OPEN = "open"
    STANDARD = "standard"
    LOCKED = "locked"
    CUSTOM = "custom"


def action_string(tool_name: str, detail: str) -> str:
    """``tool:<name>:<detail>`` with the detail on one line, so patterns see what will run."""
    return f"tool:{tool_name}:{' '.join(detail.split())}"


def spoken_action(action: str) -> str:
    """An action string as a person reads it: ``$ ls -la`` for a shell command,
    ``create_file greet.py`` for another tool's call; anything else unchanged."""
    prefix, _, rest = action.partition(":")
    name, found, detail = rest.partition(":")
    if prefix != "tool" or not found:
        return action
    return f"$ {detail}" if name == "bash_execute" else f"{name} {detail}".rstrip()


class PermissionProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    preset: Preset = Preset.STANDARD
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @field_validator("allow", "ask", "deny")
    @classmethod
    def _compiles(cls, patterns: tuple[str, ...]) -> tuple[str, ...]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from None
        return patterns

    @classmethod
    def from_stored(cls, data: dict[str, Any] | None) -> PermissionProfile:
        return cls.model_validate(data or {})

    @cached_property
    def _compiled(self) -> tuple[tuple[Permission, tuple[re.Pattern[str], ...]], ...]:
        return (
            (Permission.DENY, tuple(re.compile(p) for p in self.deny)),
            (Permission.ASK, tuple(re.compile(p) for p in self.ask)),
            (Permission.ALLOW, tuple(re.compile(p) for p in self.allow)),
        )

    def evaluate(
        self,
        action: str,
        kind: ToolKind,
        *,
        read_only_shell: bool = False,
        workspace_edit: bool = False,
    ) -> Permission:
        """The decision for one action. ``read_only_shell``: the classifier found the command
        read-only, so presets treat it as a read. ``workspace_edit``: the tool declares that
        it only edits files of the workspace (and this call writes none another tool
        guards), which the ``standard`` preset runs without asking."""
        for decision, patterns in self._compiled:
            if any(p.fullmatch(action) for p in patterns):
                return decision
        return self._preset_decision(kind, read_only_shell, workspace_edit)

    def _preset_decision(
        self, kind: ToolKind, read_only_shell: bool, workspace_edit: bool
    ) -> Permission:
        if kind in (ToolKind.PLANNING, ToolKind.INTERACTIVE):
            return Permission.ALLOW
        is_read = kind is ToolKind.READ_ONLY or read_only_shell
        if self.preset is Preset.OPEN:
            return Permission.ALLOW
        if self.preset is Preset.LOCKED:
            return Permission.ALLOW if is_read else Permission.DENY
        if is_read:
            return Permission.ALLOW
        if self.preset is Preset.STANDARD:
            return Permission.ALLOW if workspace_edit else Permission.ASK
        return Permission.ASK
