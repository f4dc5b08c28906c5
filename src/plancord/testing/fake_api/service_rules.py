"""What the Messages API accepts per model, as its documentation states it: one row per model.

The fake keeps its own table, read from the service's pages, not from the bot's model table
(``plancord.llm.models``): a wrong row there is caught by the fake refusing the request, not
mirrored by it. Each row names the pages it comes from (``docs/`` stands for
``https://platform.claude.com/docs/en/``), so the next change of the service is one row.

The test model ids (``claude-fake-test-model``, ``claude-other-fake-model``) have a row of their
own, ``LAX_TEST_RULE``: the rules of the fake before the service moved (thinking only when a
script asks, ``enabled``/``disabled`` thinking, forced tool use, no prefix check). Moving the
suite onto a real model is one constant (``tests.fakes.bodies.MODEL``).

The version rules (``anthropic-version``) are in ``fake_api.version_rules``; what the prefix
check compares is decided in ``fake_api.thinking_binding`` (``PREFIX_DETERMINATIONS``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol, TypeAlias

Display: TypeAlias = Literal["omitted", "summarized"]
EFFORTS = ("low", "medium", "high", "xhigh", "max")
ALL_EFFORTS = frozenset(EFFORTS)


@dataclass(frozen=True)
class ModelRule:
    """What one model id takes in a request and how it answers, per its documentation."""

    model: str
    sources: tuple[str, ...]
    max_output_tokens: int
    context_window_tokens: int
    thinking_types: frozenset[str]
    """The ``thinking.type`` values accepted; any other is a 400."""
    thinks_by_default: bool = False
    """A request without ``thinking`` runs with adaptive thinking (every reply has a block)."""
    default_display: Display = "summarized"
    """``thinking.display`` when the request leaves it out."""
    preserved_thinking: bool = False
    """Thinking blocks sent back are checked against their prefix (``thinking_binding``)."""
    forced_tool_choice: bool = True
    """``tool_choice`` ``any``/``tool`` accepted (also on ``count_tokens``)."""
    system_messages: bool = False
    """``role: "system"`` entries accepted inside ``messages``."""
    prefill: bool = True
    """A final assistant turn (prefill) accepted."""
    sampling_parameters: bool = True
    """Non-default ``temperature``/``top_p``/``top_k`` accepted (model rule; the 2026-10-21
    version refuses them on every model)."""
    efforts: frozenset[str] = frozenset()
    """``output_config.effort`` values accepted; empty: effort is refused."""
    between_tools_efforts: frozenset[str] = frozenset()
    """The effort levels ``between_tools`` thinking runs at."""
    structured_outputs: bool = True
    """``output_config.format`` (a JSON schema the answer follows) accepted."""
    progress_updates_in_thinking: bool = False
    """Notes longer than a sentence or two written before a tool call come back as
    progress-update ``thinking`` blocks (empty at ``display: "omitted"``), shorter remarks
    stay ``text``."""
    unreadable_thinking_of: frozenset[str] = frozenset()
    """Models whose thinking blocks this model cannot read: dropped without an error."""
    min_cacheable_tokens: int = 1024
    """The shortest prefix the prompt cache writes (a shorter one is silently not cached)."""
    lax_roles: bool = False
    """The old fake's role rules: consecutive same-role turns refused (the API merges them)."""
    legacy_signatures: bool = False
    """Thinking signatures bind the block's text only (``thinking_signature``)."""


@dataclass(frozen=True)
class RetiredModel:
    """A model id the service no longer serves: every request to it fails."""

    model: str
    retired_on: str
    replacement: str
    source: str = "docs/about-claude/model-deprecations"


class HasLimits(Protocol):
    """A test's own model (``ModelLimits``): only its output ceiling and context window."""

    @property
    def max_output_tokens(self) -> int: ...

    @property
    def context_window_tokens(self) -> int: ...


_SONNET_5_5_PAGES = (
    "docs/models/sonnet-5-5/overview",
    "docs/models/sonnet-5-5/whats-new-sonnet-5-5",
    "docs/models/sonnet-5-5/migration-guide",
    "docs/build-with-claude/preserved-thinking/prefix-checks",
)
_FIVE_FIVE_READERS_ONLY = frozenset(
    {
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-fable-5",
        "claude-fable-5-1",
        "claude-fable-5-2",
        "claude-mythos-5",
        "claude-mythos-5-1",
        "claude-mythos-5-2",
    }
)
"""whats-new-sonnet-5-5: Sonnet 5.5 reads Sonnet 5, Opus 4.8, Haiku 4.5 and earlier models'
blocks, not Opus 5, Opus 5.5, Fable or Mythos ones."""
_READS_NO_SONNET_5_5 = frozenset({"claude-sonnet-5-5"})
"""whats-new-sonnet-5-5: only Opus 5.5 reads Sonnet 5.5 thinking blocks."""

SONNET_5_5 = ModelRule(
    model="claude-sonnet-5-5",
    sources=_SONNET_5_5_PAGES,
    max_output_tokens=128_000,
    context_window_tokens=1_000_000,
    thinking_types=frozenset({"adaptive", "between_tools"}),
    thinks_by_default=True,
    default_display="omitted",
    preserved_thinking=True,
    forced_tool_choice=False,
    system_messages=True,
    prefill=False,
    sampling_parameters=False,
    efforts=ALL_EFFORTS,
    between_tools_efforts=frozenset({"low", "medium", "high"}),
    progress_updates_in_thinking=True,
    unreadable_thinking_of=_FIVE_FIVE_READERS_ONLY,
    min_cacheable_tokens=512,
)
SONNET_5 = ModelRule(
    model="claude-sonnet-5",
    sources=("docs/models/sonnet-5/overview", "docs/models/sonnet-5-5/migration-guide"),
    max_output_tokens=128_000,
    context_window_tokens=1_000_000,
    thinking_types=frozenset({"adaptive", "disabled"}),
    thinks_by_default=True,
    default_display="omitted",
    prefill=False,
    sampling_parameters=False,
    efforts=ALL_EFFORTS,
    unreadable_thinking_of=_READS_NO_SONNET_5_5,
)
SONNET_4_6 = ModelRule(
    model="claude-sonnet-4-6",
    sources=("docs/models/sonnet-4-6/overview", "docs/models/sonnet-5-5/migration-guide"),
    max_output_tokens=128_000,
    context_window_tokens=1_000_000,
    thinking_types=frozenset({"adaptive", "disabled", "enabled"}),
    prefill=False,
    efforts=frozenset({"low", "medium", "high", "max"}),
    unreadable_thinking_of=_READS_NO_SONNET_5_5,
)
OPUS_4_6 = replace(
    SONNET_4_6,
    model="claude-opus-4-6",
    sources=("docs/models/opus-4-6/overview", "docs/build-with-claude/prompt-caching"),
    min_cacheable_tokens=4096,
)
_FOUR_FIVE = ModelRule(
    model="claude-sonnet-4-5",
    sources=("docs/models/sonnet-4-5/overview", "docs/models/sonnet-5-5/migration-guide"),
    max_output_tokens=64_000,
    context_window_tokens=200_000,
    thinking_types=frozenset({"enabled", "disabled"}),
    unreadable_thinking_of=_READS_NO_SONNET_5_5,
)
HAIKU_4_5 = replace(
    _FOUR_FIVE,
    model="claude-haiku-4-5",
    sources=("docs/models/haiku-4-5/overview", "docs/build-with-claude/prompt-caching"),
    min_cacheable_tokens=4096,
)
OPUS_4_5 = replace(
    _FOUR_FIVE,
    model="claude-opus-4-5",
    sources=("docs/models/opus-4-5/overview", "docs/build-with-claude/effort"),
    efforts=frozenset({"low", "medium", "high"}),
    min_cacheable_tokens=4096,
)


def _aliases(rule: ModelRule, *ids: str) -> dict[str, ModelRule]:
    return {rule.model: rule, **{alias: replace(rule, model=alias) for alias in ids}}


LAX_TEST_RULE = ModelRule(
    model="claude-fake-test-model",
    sources=("the fake's own test models: the service as it was before 2026",),
    max_output_tokens=64_000,
    context_window_tokens=200_000,
    thinking_types=frozenset({"enabled", "disabled"}),
    efforts=ALL_EFFORTS,
    between_tools_efforts=ALL_EFFORTS,
    min_cacheable_tokens=0,
    lax_roles=True,
    legacy_signatures=True,
)
"""The old lax family: what the fake enforced before it followed the service of today."""

MODEL_RULES: dict[str, ModelRule] = {
    **_aliases(SONNET_5_5),
    **_aliases(SONNET_5),
    **_aliases(SONNET_4_6),
    **_aliases(OPUS_4_6),
    **_aliases(OPUS_4_5, "claude-opus-4-5-20251101"),
    **_aliases(_FOUR_FIVE, "claude-sonnet-4-5-20250929"),
    **_aliases(HAIKU_4_5, "claude-haiku-4-5-20251001"),
    "claude-fake-test-model": LAX_TEST_RULE,
    "claude-other-fake-model": replace(LAX_TEST_RULE, model="claude-other-fake-model"),
}
"""Every model id the fake serves (docs/models/overview and each model's page)."""

RETIRED_MODELS: dict[str, RetiredModel] = {
    retired.model: retired
    for retired in (
        RetiredModel("claude-opus-4-1-20250805", "2026-08-05", "claude-opus-4-8"),
        RetiredModel("claude-opus-4-1", "2026-08-05", "claude-opus-4-8"),
        RetiredModel("claude-opus-4-20250514", "2026-06-15", "claude-opus-4-8"),
        RetiredModel("claude-opus-4-0", "2026-06-15", "claude-opus-4-8"),
        RetiredModel("claude-sonnet-4-20250514", "2026-06-15", "claude-sonnet-5-5"),
        RetiredModel("claude-sonnet-4-0", "2026-06-15", "claude-sonnet-5-5"),
        RetiredModel("claude-3-7-sonnet-20250219", "2026-02-19", "claude-sonnet-5-5"),
        RetiredModel("claude-3-5-haiku-20241022", "2026-02-19", "claude-haiku-4-5"),
        RetiredModel("claude-3-haiku-20240307", "2026-04-20", "claude-haiku-4-5"),
    )
}
"""docs/about-claude/model-deprecations: "Requests to retired models will fail." The page
documents no error of its own, so a retired id fails as an unknown one does (404
``not_found_error``, ``model: <id>``); the fake refuses it even if a table elsewhere still
lists it."""


@dataclass(frozen=True)
class ModelTable:
    """The rules a server plays: the documented rows, or a test's own models."""

    rules: Mapping[str, ModelRule] = field(default_factory=lambda: dict(MODEL_RULES))
    retired: Mapping[str, RetiredModel] = field(default_factory=lambda: dict(RETIRED_MODELS))

    @classmethod
    def of(cls, models: Mapping[str, ModelRule | HasLimits] | None) -> ModelTable:
        """The documented table, or ``models`` alone: a ``ModelRule`` as given, anything else
        (a ``ModelLimits``) as the lax test rule with its limits."""
        if models is None:
            return cls()
        rules = {
            name: given
            if isinstance(given, ModelRule)
            else replace(
                LAX_TEST_RULE,
                model=name,
                max_output_tokens=given.max_output_tokens,
                context_window_tokens=given.context_window_tokens,
            )
            for name, given in models.items()
        }
        return cls(rules=rules, retired={})

    def get(self, model: object) -> ModelRule | None:
        if not isinstance(model, str) or model in self.retired:
            return None
        return self.rules.get(model)

    def __contains__(self, model: object) -> bool:
        return self.get(model) is not None
