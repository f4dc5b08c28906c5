"""``shell.read_only_rules``: commands an operator adds to the read-only filter.

Each entry names a command (or ``command sub-command``), its allow-list option table in the
filter's own terms, what its operands are, and examples: ``match`` commands it must judge
read-only and ``not_match`` commands it must not. The examples are judged when the config
is loaded, so a rule that does not do what its author meant stops plancord from starting
with the example that failed::

    shell:
      read_only_rules:
        - command: cargo metadata
          long_flags: [no-deps, offline, frozen, locked]
          long_values: [format-version, manifest-path]
          path_options: [--manifest-path]
          operands: none
          match: ["cargo metadata --no-deps --format-version 1"]
          not_match: ["cargo metadata --no-deps extra", "cargo build"]
        - command: ./scripts/stats.sh    # the project's own read-only script
          operands: none
          match: ["./scripts/stats.sh"]

A rule only says "read-only": the command then runs in the read-only sandbox, and where no
read-only wall runs (``sandbox.layer: off``) it asks.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from plancord.config.fields import _MODEL_CONFIG
from plancord.core.shell.readonly.operator_rules import OperatorRule
from plancord.core.shell.readonly.options import OptionTable


class ReadOnlyRuleConfig(BaseModel):
    """One operator rule as written in the config file."""

    model_config = _MODEL_CONFIG

    command: str = Field(
        min_length=1,
        pattern=r"^(\./)?[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*"
        r"( [A-Za-z0-9_.+:-]+)*$",
    )
    """A program name, or a path inside the workspace (``./scripts/stats.sh``, no ``..``)
    naming the project's own script, optionally followed by a sub-command."""
    flags: str = Field(default="", pattern=r"^[A-Za-z0-9]*$")
    values: str = Field(default="", pattern=r"^[A-Za-z0-9]*$")
    long_flags: list[str] = []
    long_values: list[str] = []
    path_options: list[str] = []
    operands: Literal["paths", "free", "text", "none"] = "paths"
    abbreviations: bool = False
    match: list[str] = Field(min_length=1)
    not_match: list[str] = []

    def rule(self) -> OperatorRule:
        table = OptionTable(
            source=f"the operator's rule for `{self.command}`",
            flags=self.flags,
            values=self.values,
            long_flags=" ".join(self.long_flags),
            long_values=" ".join(self.long_values),
            abbreviations=self.abbreviations,
        )
        return OperatorRule(
            command=self.command,
            table=table,
            operands=self.operands,
            path_options=tuple(self.path_options),
            match=tuple(self.match),
            not_match=tuple(self.not_match),
        )
