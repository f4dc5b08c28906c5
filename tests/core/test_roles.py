"""Role names resolve to exactly one id; what changed since the last resolution is told once."""

from __future__ import annotations

from plancord.core.roles import RoleNames
from plancord.core.settings import PlanModeSettings

ROLES = [("10", "Maintainers"), ("20", "Ops"), ("21", "Ops")]


def test_a_name_resolves_to_its_one_role_and_several_grant_nothing() -> None:
    names = RoleNames.resolve({"Maintainers", "Ops", "Ghosts"}, ROLES)
    assert dict(names.ids) == {"Maintainers": "10"}
    settings = PlanModeSettings.model_validate({"approver_roles": ["Maintainers", "Ops", "30"]})
    assert names.apply(settings).approver_roles == ("10", "30")
    assert len(names.problems) == 2


def test_changes_and_problems_since_the_last_resolution() -> None:
    first = RoleNames.resolve({"Maintainers", "Ops"}, ROLES)
    assert first.changes_since(RoleNames({})) == [
        "config: the role name 'Maintainers' now means role 10"
    ]
    again = RoleNames.resolve({"Maintainers", "Ops"}, ROLES)
    assert again.changes_since(first) == []
    assert again.problems_since(first) == []

    renamed = RoleNames.resolve({"Maintainers", "Ops"}, [("10", "Old"), ("20", "Ops")])
    assert renamed.changes_since(again) == [
        "config: the role name 'Maintainers' no longer grants anything",
        "config: the role name 'Ops' now means role 20",
    ]
    assert renamed.problems_since(again) == [
        "config: the role name 'Maintainers' matches no role; write its id instead"
    ]
