"""Thinking block signatures: what a block sent back is bound to, and the check on it.

docs/build-with-claude/preserved-thinking and .../prefix-checks: when a thinking block comes
back, the API checks its signature for two things. The model can read the block (each model
reads its own blocks and a fixed set of others'; a block it cannot read is dropped without
an error). And, on a model with preserved thinking, nothing before the block changed: the
top-level ``system``, ``tools`` and every message before it (``fake_api.prefix_hash``), and
the chain of earlier thinking blocks is unbroken (removing blocks from the front is fine,
from the middle is not). On a mismatch the request fails with a 400 naming the first failing
block, or, with ``thinking.block_binding.prefix_mismatch_behavior: "drop_block"`` (beta
header ``thinking-binding-controls-2026-08-01``), that block is dropped and so is every
later one produced before the change; the reply lists each in ``input_transformations``
(``{"type": "thinking_dropped", "path": "messages.i.content.j", "reason": ...}``). A block
produced after the change records the changed prefix and stays valid. This fake is an
account created after 2026-08-31, where the check is enforced by default.

The fake's signature records the producing model, the three prefix hashes, the block before
it in the chain, and a MAC over all of it and the block's text, so an edited block is refused
as the API refuses one. The test models (``LAX_TEST_RULE``) sign the text alone, as the fake
always did (``thinking_signature``).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from plancord.testing.fake_api.model_rules import prefix_mismatch_behavior
from plancord.testing.fake_api.prefix_hash import (
    MessagesHasher,
    ThinkingSite,
    system_hash,
    thinking_sites,
    tools_hash,
)
from plancord.testing.fake_api.rules import reject
from plancord.testing.fake_api.service_rules import ModelRule
from plancord.testing.fake_api.version_rules import THINKING_BINDING_BETA, RequestContext
from plancord.testing.fake_api.wire import JsonObject

_KEY = b"plancord fake thinking binding\0"
_PREFIX = "fakesig1."


def thinking_signature(thinking: str) -> str:
    """The signature the test models give a block: it binds the block's own text only."""
    digest = hashlib.sha256(b"fake-thinking-signature\0" + thinking.encode("utf-8"))
    return digest.hexdigest()


@dataclass(frozen=True)
class Binding:
    """What a signature records about the block it signs."""

    model: str
    system: str
    tools: str
    messages: str
    previous: str


def _mac(payload: str, text: str) -> str:
    return hashlib.sha256(_KEY + payload.encode() + b"\0" + text.encode("utf-8")).hexdigest()[:32]


def sign(text: str, binding: Binding) -> str:
    payload = base64.urlsafe_b64encode(
        json.dumps(binding.__dict__, sort_keys=True).encode()
    ).decode()
    return f"{_PREFIX}{payload}.{_mac(payload, text)}"


def read_signature(signature: str, text: str) -> Binding | Literal[False] | None:
    """The binding a signature records; ``None`` if it is not one of ours (no record);
    ``False`` if it is ours but the text or the record was changed."""
    if not signature.startswith(_PREFIX):
        return None
    payload, _, mac = signature[len(_PREFIX) :].rpartition(".")
    if _mac(payload, text) != mac:
        return False
    try:
        fields = json.loads(base64.urlsafe_b64decode(payload.encode()))
        return Binding(**fields)
    except (ValueError, TypeError):
        return False


def chain_id(signature: str) -> str:
    return hashlib.sha256(signature.encode()).hexdigest()[:16]


def _signature_and_text(block: JsonObject) -> tuple[str, str]:
    if block.get("type") == "redacted_thinking":
        return str(block.get("data", "")), ""
    return str(block.get("signature", "")), str(block.get("thinking", ""))


@dataclass
class BindingOutcome:
    """What the model sees of the request's thinking blocks, and how to sign its reply."""

    body: JsonObject
    transformations: list[JsonObject] = field(default_factory=list)
    previous: str = ""
    hasher: MessagesHasher = field(default_factory=MessagesHasher)


class _Refusal(Exception):
    def __init__(self, site: ThinkingSite, what: str) -> None:
        super().__init__(what)
        self.site = site
        self.what = what


def check_bindings(body: JsonObject, rule: ModelRule, context: RequestContext) -> BindingOutcome:
    """Apply the model check and (on preserved-thinking models) the prefix check."""
    hasher = MessagesHasher()
    system, tools = system_hash(body), tools_hash(body)
    drops: list[tuple[ThinkingSite, str]] = []
    previous, kept_any = "", False
    drop = prefix_mismatch_behavior(body) == "drop_block"
    for site in thinking_sites(list(body.get("messages") or []), hasher):
        signature, text = _signature_and_text(site.block)
        recorded = read_signature(signature, text)
        # A test-model signature (the text's hash) records no conversation: on a model with
        # preserved thinking it fails the prefix check below, elsewhere it is valid.
        if recorded is False or (recorded is None and signature != thinking_signature(text)):
            kind = site.block.get("type")
            raise reject(f"{site.path}: Invalid `signature` in `{kind}` block")
        if isinstance(recorded, Binding) and recorded.model in rule.unreadable_thinking_of:
            drops.append((site, "model_binding_mismatch"))
            continue
        if rule.preserved_thinking:
            what = _what_changed(recorded, site, system, tools, previous, kept_any)
            if what is not None:
                if not drop:
                    raise reject(_refusal_message(site, what, context))
                drops.append((site, "prefix_binding_mismatch"))
                continue
        previous, kept_any = chain_id(signature), True
    return BindingOutcome(
        body=_without(body, [site for site, _ in drops]),
        transformations=[
            {"type": "thinking_dropped", "path": site.path, "reason": reason}
            for site, reason in drops
        ],
        previous=previous,
        hasher=hasher,
    )


def _what_changed(
    recorded: Binding | None,
    site: ThinkingSite,
    system: str,
    tools: str,
    previous: str,
    kept_any: bool,
) -> str | None:
    if recorded is None:
        return "The block carries no record of this conversation."
    if recorded.system != system:
        return "The `system` prompt differs from when the block was created."
    if recorded.tools != tools:
        return "The `tools` list differs from when the block was created."
    if recorded.messages != site.messages_hash:
        return "A message before the block differs from when the block was created."
    if kept_any and recorded.previous != previous:
        return "A thinking block before it was left out or moved."
    return None


def _refusal_message(site: ThinkingSite, what: str, context: RequestContext) -> str:
    kind = site.block.get("type")
    message = (
        f"{site.path}: Invalid `signature` in `{kind}` block. The block is bound to a different "
        "conversation. Remove the block, or set "
        '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".'
    )
    if not context.has(THINKING_BINDING_BETA):
        message += (
            f" That setting requires the `{THINKING_BINDING_BETA}` value in the "
            "`anthropic-beta` header."
        )
    return f"{message} {what}"


def _without(body: JsonObject, sites: Sequence[ThinkingSite]) -> JsonObject:
    if not sites:
        return body
    seen = copy.deepcopy(body)
    for site in sorted(sites, key=lambda s: (s.index, s.position), reverse=True):
        content = seen["messages"][site.index]["content"]
        if isinstance(content, list):
            del content[site.position]
    return seen


def sign_reply(
    content: list[JsonObject], body: JsonObject, rule: ModelRule, outcome: BindingOutcome
) -> None:
    """Give each thinking block of ``content`` (the reply to ``body``) its signature, bound to
    the request as sent and to the blocks of the reply before it."""
    if rule.legacy_signatures:
        for block in content:
            if block["type"] == "thinking" and not block.get("signature"):
                block["signature"] = thinking_signature(block["thinking"])
        return
    hasher = outcome.hasher.copy()
    hasher.open_message({"role": "assistant"})
    system, tools = system_hash(body), tools_hash(body)
    previous = outcome.previous
    for block in content:
        if block["type"] != "thinking":
            hasher.add_block(block)
            continue
        if not block.get("signature"):
            binding = Binding(body["model"], system, tools, hasher.snapshot(), previous)
            block["signature"] = sign(block["thinking"], binding)
        previous = chain_id(block["signature"])


def transformations_field(outcome: BindingOutcome, context: RequestContext) -> dict[str, Any]:
    """``input_transformations`` on the reply: only with the beta header, then always."""
    if not context.has(THINKING_BINDING_BETA):
        return {}
    return {"input_transformations": list(outcome.transformations)}
