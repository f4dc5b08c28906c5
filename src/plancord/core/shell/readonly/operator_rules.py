"""Rules an operator adds to the read-only filter, each proven by its own examples.

An operator knows commands the filter does not (``cargo metadata``, ``kubectl get``, a
project's own inspection script). ``OperatorRule`` adds one command, or one sub-command of
a command, with an allow-list option table parsed like the built-in ones and a statement of
what its operands are. Each rule carries ``match`` examples (must be judged read-only) and
``not_match`` examples (must not be), and ``check_examples`` runs them all when plancord
starts: a rule that does not do what its author meant is a configuration error naming the
example that failed (``rule_examples``), in the manner of Codex's exec-policy files.

An operator rule decides only the command it names; everything else about the command
line (reading, expansion, redirections, paths of operands) is judged as always.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from plancord.core.shell.readonly.commands import Call, Operands, table_rule
from plancord.core.shell.readonly.options import OptionTable


@dataclass(frozen=True, slots=True)
class OperatorRule:
    """``command`` is a program name, optionally followed by a sub-command (``cargo tree``)."""

    command: str
    table: OptionTable
    operands: Operands = "paths"
    path_options: tuple[str, ...] = ()
    match: tuple[str, ...] = ()
    not_match: tuple[str, ...] = field(default_factory=tuple)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self.command.split())

    def applies_to(self, argv: Sequence[str]) -> bool:
        return tuple(argv[: len(self.words)]) == self.words

    def judge(self, call: Call) -> None:
        """Raise ``Denied`` unless the call's options and operands fit the rule."""
        depth = len(self.words) - 1
        rule = table_rule(self.table, self.operands, path_options=self.path_options)
        rule(Call(self.command, call.args[depth:], call.place, call.feeders))

    @property
    def label(self) -> str:
        return f"operator rule `{self.command}` (shell.read_only_rules)"


def find_rule(rules: Sequence[OperatorRule], argv: Sequence[str]) -> OperatorRule | None:
    """The most specific operator rule for ``argv`` (``cargo tree`` before ``cargo``)."""
    fitting = [rule for rule in rules if rule.applies_to(argv)]
    return max(fitting, key=lambda rule: len(rule.words), default=None)
