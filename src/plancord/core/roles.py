"""Roles by id: names in the config follow the server, each to exactly one role id.

Members are compared by role *id* only, at decision time. A role *name* written in the config
(``approver_roles: [Maintainers]``, ``access.roles``) is resolved to an id when the bot sees
its servers and again whenever they change (it joins a server; a role is created, renamed or
deleted), so a role made after deployment works without a restart. A name matching exactly
one role becomes that role's id; a name matching none or several is a configuration error,
reported once in one readable line, and grants nothing: a second role taking an approver
role's name makes the name grant nothing rather than let the newcomer in. Whoever may
create or rename roles can therefore steer what a name means; an id in the config pins it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from plancord.core.settings import PlanModeSettings


def is_role_id(entry: str) -> bool:
    return entry.isdigit()


@dataclass(frozen=True, slots=True)
class RoleNames:
    """Role names from the config and the one id each resolved to."""

    ids: Mapping[str, str]
    problems: tuple[str, ...] = ()

    @classmethod
    def resolve(cls, names: Iterable[str], roles: Iterable[tuple[str, str]]) -> RoleNames:
        """Resolve ``names`` against ``roles`` (``(role id, role name)`` of every server)."""
        by_name: dict[str, set[str]] = {}
        for role_id, role_name in roles:
            by_name.setdefault(role_name, set()).add(role_id)
        ids: dict[str, str] = {}
        problems: list[str] = []
        for name in sorted(set(names)):
            found = by_name.get(name, set())
            if len(found) == 1:
                ids[name] = next(iter(found))
            elif not found:
                problems.append(
                    f"config: the role name {name!r} matches no role; write its id instead"
                )
            else:
                listed = ", ".join(sorted(found))
                problems.append(
                    f"config: the role name {name!r} matches {len(found)} roles ({listed}); "
                    "write the id of the one you mean"
                )
        return cls(ids, tuple(problems))

    def problems_since(self, before: RoleNames) -> list[str]:
        """This resolution's problems that ``before`` did not have: each is reported once."""
        return [problem for problem in self.problems if problem not in before.problems]

    def changes_since(self, before: RoleNames) -> list[str]:
        """One line for every name whose role differs from ``before``'s (the first
        resolution reports every resolved name)."""
        lines: list[str] = []
        for name in sorted(set(self.ids) | set(before.ids)):
            now, was = self.ids.get(name), before.ids.get(name)
            if now == was:
                continue
            if now is None:
                lines.append(f"config: the role name {name!r} no longer grants anything")
            else:
                lines.append(f"config: the role name {name!r} now means role {now}")
        return lines

    def apply(self, settings: PlanModeSettings) -> PlanModeSettings:
        """``settings`` with every role name replaced by its id; unresolved names dropped."""
        approvers = self._ids(settings.approver_roles)
        access = settings.access.model_copy(update={"roles": self._ids(settings.access.roles)})
        return settings.model_copy(update={"approver_roles": approvers, "access": access})

    def _ids(self, entries: tuple[str, ...]) -> tuple[str, ...]:
        out: list[str] = []
        for entry in entries:
            resolved = entry if is_role_id(entry) else self.ids.get(entry)
            if resolved is not None and resolved not in out:
                out.append(resolved)
        return tuple(out)


def role_names_in(settings: Iterable[PlanModeSettings]) -> set[str]:
    """Every role name (not id) the given settings mention."""
    names: set[str] = set()
    for layer in settings:
        names |= {r for r in (*layer.approver_roles, *layer.access.roles) if not is_role_id(r)}
    return names
