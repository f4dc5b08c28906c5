"""Every command the read-only filter knows, one family per module; adding a command is one
entry in its family's ``RULES``."""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.commands import Rule
from plancord.core.shell.readonly.tables import (
    checksums,
    files,
    find,
    git,
    programs,
    search,
    system,
    text,
    viewers,
)
from plancord.core.shell.readonly.tables.refused import REFUSED

__all__ = ["FAMILIES", "REFUSED", "RULES"]

RULES: Final[dict[str, Rule]] = {
    **text.RULES,
    **files.RULES,
    **search.RULES,
    **programs.RULES,
    **git.RULES,
    **checksums.RULES,
    **system.RULES,
    **viewers.RULES,
}
RULES["xargs"] = search.xargs_rule(RULES)
RULES["find"] = find.find_rule(RULES)

_FAMILY_NAMES: Final = {
    text: "text tools",
    files: "files and directories",
    search: "searching",
    programs: "programs inside programs",
    git: "git",
    checksums: "checksums",
    system: "system information",
    viewers: "readers without a terminal",
}
FAMILIES: Final[dict[str, str]] = {
    name: family for module, family in _FAMILY_NAMES.items() for name in module.RULES
} | {"xargs": "searching", "find": "find and the readers -exec runs"}
"""Each command's family (its table module), which ``check-bash --explain`` names."""
