"""The Messages API's streaming wire format: a reply as the server-sent events the real API
sends for a request that asked for ``stream`` (message start, a ping, each content block as
start, deltas in small pieces and stop, the final delta with the stop reason, message stop)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from plancord.testing.fake_api.wire import JsonObject


def _chunks(text: str, size: int = 24) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]


def stream_events(message: JsonObject) -> Iterator[JsonObject]:
    """The server-sent events that deliver `message` when the request asked for `stream`."""
    usage = message["usage"]
    yield {
        "type": "message_start",
        "message": {
            **message,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {**usage, "output_tokens": 1},
        },
    }
    yield {"type": "ping"}
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start: JsonObject = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block["text"])]
        elif block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            pieces = _chunks(block["thinking"]) if block["thinking"] else []
            deltas = [
                *({"type": "thinking_delta", "thinking": piece} for piece in pieces),
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        else:
            start = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _chunks(json.dumps(block["input"]))
            ]
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    yield {
        "type": "message_delta",
        "delta": {
            "stop_reason": message["stop_reason"],
            "stop_sequence": None,
            "stop_details": message.get("stop_details"),
        },
        "usage": {"output_tokens": usage["output_tokens"]},
    }
    yield {"type": "message_stop"}
