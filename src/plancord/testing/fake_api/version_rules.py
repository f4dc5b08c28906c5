"""What the ``anthropic-version`` and ``anthropic-beta`` headers change about a request.

The installed SDK (``anthropic`` 2.15) sends ``anthropic-version: 2026-10-21``. The rules are
the rows of ``VERSION_RULES``, each with its page (``docs/`` is
``https://platform.claude.com/docs/en/``); ``check_version_rules`` applies them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from plancord.testing.fake_api.rules import RequestRejected, reject
from plancord.testing.fake_api.wire import JsonObject

VERSION_2026_10_21 = "2026-10-21"
KNOWN_VERSIONS = frozenset({"2023-01-01", "2023-06-01", VERSION_2026_10_21})
SAMPLING_PARAMETERS = ("temperature", "top_p", "top_k")

THINKING_BINDING_BETA = "thinking-binding-controls-2026-08-01"
"""docs/build-with-claude/preserved-thinking: ``block_binding`` and ``input_transformations``."""
THINKING_DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18"
"""docs/models/sonnet-5-5/migration-guide: ``display: "updates"`` is a beta."""
SYSTEM_CLEAR_AT_BETA = "mid-conversation-system-clear-at-2026-08-21"
"""docs/build-with-claude/preserved-thinking: turn-scoped system messages (``clear_at``)."""


@dataclass(frozen=True)
class VersionRule:
    """One documented rule of an API version."""

    version: str
    rule: str
    source: str


VERSION_RULES: tuple[VersionRule, ...] = (
    VersionRule("any", "the header is required; an unknown value is a 400", "docs/api/versioning"),
    VersionRule(
        VERSION_2026_10_21,
        "temperature, top_p and top_k are a 400 on every model, even at their default values "
        '("temperature: Extra inputs are not permitted")',
        "docs/api/migration-2026-10-21",
    ),
    VersionRule(
        VERSION_2026_10_21,
        "non-empty citations on a text block of a user message are a 400",
        "docs/api/migration-2026-10-21",
    ),
    VersionRule(
        "any",
        "document blocks in assistant messages are refused (a 400 from 2026-10-21 on; the fake "
        "refused them before too, and the bot sends none)",
        "docs/api/migration-2026-10-21",
    ),
)


@dataclass(frozen=True)
class RequestContext:
    """What the headers of one request say: its API version and the betas it opts into."""

    version: str = VERSION_2026_10_21
    betas: frozenset[str] = frozenset()

    @classmethod
    def of(cls, headers: Mapping[str, str]) -> RequestContext:
        version = headers.get("anthropic-version", "").strip()
        if not version:
            raise RequestRejected("anthropic-version: header is required")
        if version not in KNOWN_VERSIONS:
            raise RequestRejected(
                f"anthropic-version: {version!r} is not a valid version; use one of "
                + ", ".join(sorted(KNOWN_VERSIONS))
            )
        betas = frozenset(
            part.strip() for part in headers.get("anthropic-beta", "").split(",") if part.strip()
        )
        return cls(version=version, betas=betas)

    def has(self, beta: str) -> bool:
        return beta in self.betas


def check_version_rules(body: JsonObject, context: RequestContext) -> None:
    """Refuse what the request's API version no longer takes."""
    if context.version != VERSION_2026_10_21:
        return
    for name in SAMPLING_PARAMETERS:
        if name in body:
            raise reject(f"{name}: Extra inputs are not permitted")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for position, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "text" and block.get("citations"):
                raise reject(
                    f"messages.{index}.content.{position}.text.citations: Extra inputs are not "
                    "permitted"
                )
