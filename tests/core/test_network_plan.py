"""A step's ``network`` hosts: the schema, the canonical text, the diff, and the operator's
bound judged at submit."""

from __future__ import annotations

import pytest

from plancord.core.errors import PlanValidationError
from plancord.core.network import NetworkBound, matches_host, pattern_within
from plancord.core.plan import validate_plan
from plancord.core.plan_diff import diff_plans


def _plan(*networks: list[str]) -> dict[str, object]:
    return {
        "summary": "Add a dependency",
        "steps": [
            {"description": f"step {n}", "network": hosts} for n, hosts in enumerate(networks)
        ],
    }


def test_a_step_names_hosts_shown_in_the_canonical_text() -> None:
    plan = validate_plan(_plan(["PyPI.org.", "*.pythonhosted.org"], []))
    assert plan.steps[0].network == ("pypi.org", "*.pythonhosted.org")
    assert plan.steps[1].network == ()
    assert "   network: `pypi.org`, `*.pythonhosted.org`" in plan.to_markdown()
    assert '"network"' in plan.canonical_json()
    bare = validate_plan({"summary": "s", "steps": [{"description": "d"}]})
    assert "network" not in bare.canonical_json()
    assert "network" not in bare.to_markdown()


@pytest.mark.parametrize(
    "host",
    ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "*", "*.org", "a b", "*.*.org", ""],
)
def test_what_is_not_a_host_is_refused_with_the_reason(host: str) -> None:
    with pytest.raises(PlanValidationError) as caught:
        validate_plan(_plan([host]))
    assert "steps[0].network" in str(caught.value)


def test_matching_exact_and_wildcard() -> None:
    assert matches_host(["pypi.org"], "PYPI.org.")
    assert not matches_host(["pypi.org"], "evil-pypi.org")
    assert matches_host(["*.pythonhosted.org"], "files.pythonhosted.org")
    assert matches_host(["*.pythonhosted.org"], "a.b.pythonhosted.org")
    assert not matches_host(["*.pythonhosted.org"], "pythonhosted.org")
    assert not matches_host(["*.pythonhosted.org"], "evilpythonhosted.org")


def test_a_pattern_is_within_the_bound_only_when_every_host_it_names_is() -> None:
    bound = ("pypi.org", "*.example.org")
    assert pattern_within("pypi.org", bound)
    assert pattern_within("a.example.org", bound)
    assert pattern_within("*.example.org", bound)
    assert pattern_within("*.cdn.example.org", bound)
    assert not pattern_within("*.org", bound)
    assert not pattern_within("example.org", bound)
    assert not pattern_within("*.pypi.org", bound)


def test_the_bound_names_each_host_outside_it_with_its_step() -> None:
    bound = NetworkBound(allow=("pypi.org",))
    assert bound.problems([["pypi.org"], []]) == []
    problems = bound.problems([["pypi.org"], ["evil.example"]])
    assert problems == [
        "steps[1].network: evil.example is not among the hosts the operator allows "
        "this agent (pypi.org)"
    ]
    assert NetworkBound().problems([["pypi.org"]])[0].startswith("steps[0].network: this agent")
    assert NetworkBound(anything=True).problems([["anything.example"]]) == []
    assert NetworkBound().problems([[], []]) == []
    held = NetworkBound(allow=("pypi.org",), unavailable="no proxy here")
    assert held.problems([["pypi.org"]]) == ["steps[0].network: no proxy here"]


def test_the_diff_names_a_step_whose_hosts_changed() -> None:
    old = validate_plan(_plan(["pypi.org"]))
    new = validate_plan(_plan(["pypi.org", "files.pythonhosted.org"]))
    diff = diff_plans(old, new, 1, 2)
    assert "network `pypi.org` → `pypi.org`, `files.pythonhosted.org`" in diff.to_markdown()
