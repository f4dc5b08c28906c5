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

__all__ = ["REFUSED", "RULES"]

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
