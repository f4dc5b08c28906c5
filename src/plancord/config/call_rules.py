"""``rules``: the operator's rules for tool calls, and how long the reason for each call is kept.

.. code-block:: yaml

    rules:
      calls:
        - decision: deny          # allow, ask or deny
          tool: bash_execute
          command: git push       # an argv prefix, split as the shell splits words
        - decision: allow
          tool: create_file
          path: "docs/**"         # a path pattern inside the workspace
          agent: ada              # one agent; leave it out for every agent
      records:
        keep_per_plan: 500        # decision records kept per plan (the newest)
        retention_days: 30        # older records are dropped

Operator rules rank over every rule a member makes on a permission card (the table in
``docs/plan-mode.md``), and like those they never apply while planning.
"""

from __future__ import annotations

import shlex

from pydantic import BaseModel, Field, field_validator, model_validator

from plancord.config.fields import _MODEL_CONFIG, AgentName
from plancord.core.call_rules import FILE_TOOLS, SHELL_TOOLS, CallRule, RuleScope, RuleTier
from plancord.core.kinds import Permission


class OperatorCallRule(BaseModel):
    model_config = _MODEL_CONFIG

    decision: Permission
    tool: str = Field(min_length=1, max_length=100)
    command: str | None = None
    path: str | None = None
    agent: AgentName | None = None

    @field_validator("command")
    @classmethod
    def _words(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"command {value!r} cannot be split into words: {exc}") from None
        if not words:
            raise ValueError("command names no program")
        return value

    @model_validator(mode="after")
    def _scope_fits_the_tool(self) -> OperatorCallRule:
        if self.command is not None and self.tool not in SHELL_TOOLS:
            raise ValueError(f"command narrows a shell tool ({', '.join(sorted(SHELL_TOOLS))})")
        if self.path is not None and self.tool not in FILE_TOOLS:
            raise ValueError(f"path narrows a file tool ({', '.join(sorted(FILE_TOOLS))})")
        self.scope()  # raises ValueError for a pattern outside the workspace
        return self

    def scope(self) -> RuleScope:
        argv = tuple(shlex.split(self.command)) if self.command is not None else None
        return RuleScope(tool=self.tool, argv=argv, path=self.path)

    def rule(self, index: int) -> CallRule:
        return CallRule(
            id=f"op{index}",
            tier=RuleTier.OPERATOR,
            decision=self.decision,
            agent=self.agent,
            scope=self.scope(),
            created_by="config (rules.calls)",
        )


class CallRecordsConfig(BaseModel):
    model_config = _MODEL_CONFIG

    keep_per_plan: int = Field(default=500, ge=10, le=100_000)
    retention_days: int = Field(default=30, ge=1, le=3650)


class RulesConfig(BaseModel):
    model_config = _MODEL_CONFIG

    calls: list[OperatorCallRule] = []
    records: CallRecordsConfig = Field(default_factory=CallRecordsConfig)

    @property
    def operator_rules(self) -> tuple[CallRule, ...]:
        return tuple(rule.rule(i) for i, rule in enumerate(self.calls, start=1))
