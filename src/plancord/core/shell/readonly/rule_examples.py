"""Operator rules proven by their own examples: each ``match`` example must be judged
read-only and each ``not_match`` example must not, judged by the whole filter (``classify``)
exactly as an agent's command would be, in an empty workspace."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from plancord.core.shell.readonly.classify import classify
from plancord.core.shell.readonly.operator_rules import OperatorRule


@dataclass(frozen=True, slots=True)
class ExampleFailure:
    """An example that did not come out as its rule says: the rule, the example, why."""

    rule: OperatorRule
    example: str
    expected_allowed: bool
    reason: str

    def __str__(self) -> str:
        if self.expected_allowed:
            return (
                f"the rule for `{self.rule.command}` should allow its match example "
                f"{self.example!r}, but it is denied: {self.reason}"
            )
        return (
            f"the rule for `{self.rule.command}` should deny its not_match example "
            f"{self.example!r}, but it is allowed ({self.reason})"
        )


def check_examples(rules: Sequence[OperatorRule]) -> ExampleFailure | None:
    """Judge every rule's examples in an empty workspace; the first that fails, or None."""
    with tempfile.TemporaryDirectory(prefix="plancord-rules-") as workspace:
        for rule in rules:
            for expected, examples in ((True, rule.match), (False, rule.not_match)):
                for example in examples:
                    verdict = classify(example, workspace, rules)
                    if verdict.allowed != expected:
                        return ExampleFailure(rule, example, expected, verdict.reason)
    return None
