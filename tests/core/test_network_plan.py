"""A step's ``network`` hosts: the schema, the canonical text, the diff, and the operator's
bound judged at submit."""

from __future__ import annotations

import pytest

from plancord.core.errors import PlanValidationError
from plancord.core.host_names import Endpoint, parse_endpoint
from plancord.core.network import (
    NetworkBound,
    host_pattern_problem,
    matches_host,
    normal_host,
    pattern_within,
)
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
    [
        "https://pypi.org",
        "pypi.org/simple",
        "*",
        "*.org",
        "a b",
        "*.*.org",
        "",
        "pypi.org:99999",
        "pypi.org:",
        "a\0.pypi.org",
        "*.127.0.0.1",
        "2001:db8::1",
        "[fe80::1%eth0]",
        "1.2.3.999",
        "xn--zz.org",
    ],
)
def test_what_is_not_a_host_is_refused_with_the_reason(host: str) -> None:
    with pytest.raises(PlanValidationError) as caught:
        validate_plan(_plan([host]))
    assert "steps[0].network" in str(caught.value)


def _at(text: str) -> Endpoint:
    return parse_endpoint(text, 443)


def test_matching_exact_and_wildcard() -> None:
    assert matches_host(["pypi.org"], _at("PYPI.org."))
    assert not matches_host(["pypi.org"], _at("evil-pypi.org"))
    assert matches_host(["*.pythonhosted.org"], _at("files.pythonhosted.org"))
    assert matches_host(["*.pythonhosted.org"], _at("a.b.pythonhosted.org"))
    assert not matches_host(["*.pythonhosted.org"], _at("pythonhosted.org"))
    assert not matches_host(["*.pythonhosted.org"], _at("evilpythonhosted.org"))


def test_a_grant_without_a_port_is_http_and_https_and_one_with_a_port_only_that() -> None:
    assert matches_host(["pypi.org"], _at("pypi.org:80"))
    assert matches_host(["pypi.org"], _at("pypi.org:443"))
    assert not matches_host(["pypi.org"], _at("pypi.org:22"))
    assert matches_host(["pypi.org:8443"], _at("pypi.org:8443"))
    assert not matches_host(["pypi.org:8443"], _at("pypi.org:443"))
    assert matches_host(["*.files.test:8080"], _at("a.files.test:8080"))
    assert not matches_host(["*.files.test:8080"], _at("a.files.test:443"))


def test_an_address_is_matched_only_by_an_address_grant_whatever_its_spelling() -> None:
    assert matches_host(["127.0.0.1"], _at("2130706433"))
    assert matches_host(["0x7f.1"], _at("[::ffff:127.0.0.1]"))
    assert matches_host(["[2001:DB8::1]:8443"], _at("[2001:db8:0::1]:8443"))
    # A name ending in numbers is an address, never a name under a wildcard.
    assert host_pattern_problem("*.100.7") is not None
    assert not matches_host(["*.files.test"], _at("198.51.100.7"))


def test_patterns_are_shown_in_one_spelling() -> None:
    assert normal_host(" PyPI.org. ") == "pypi.org"
    assert normal_host("Bücher.Test") == "xn--bcher-kva.test"
    assert normal_host("0177.0.0.1:8080") == "127.0.0.1:8080"
    assert normal_host("[::FFFF:7f00:1]") == "127.0.0.1"
    assert normal_host("*.Files.Test:443") == "*.files.test:443"


def test_a_pattern_is_within_the_bound_only_when_every_host_it_names_is() -> None:
    bound = ("pypi.org", "*.example.org")
    assert pattern_within("pypi.org", bound)
    assert pattern_within("a.example.org", bound)
    assert pattern_within("*.example.org", bound)
    assert pattern_within("*.cdn.example.org", bound)
    assert not pattern_within("*.org", bound)
    assert not pattern_within("example.org", bound)
    assert not pattern_within("*.pypi.org", bound)


def test_a_port_is_within_the_bound_only_when_the_bound_names_it() -> None:
    bound = ("pypi.org", "*.example.org:8443")
    assert pattern_within("pypi.org:443", bound)
    assert not pattern_within("pypi.org:22", bound)
    assert pattern_within("a.example.org:8443", bound)
    assert not pattern_within("a.example.org", bound)


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
