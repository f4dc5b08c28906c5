"""The Messages API version plancord speaks, in one place.

Why this exists: the API's contract changes with its version (2026-10-21 refuses sampling
parameters, ``citations`` on user text, a ``document`` in an assistant turn), and the SDK
chooses the ``anthropic-version`` header it sends. An SDK upgrade could change that header,
and so the contract, without a line of plancord changing. The client checks, before its
first request, that the SDK sends exactly this version, and ``pyproject.toml`` bounds the
SDK to the release line that does (``anthropic>=2.15,<2.16``).
"""

from __future__ import annotations

from collections.abc import Mapping

from plancord.core.errors import ModelCallFailed

API_VERSION = "2026-10-21"
"""The ``anthropic-version`` every request carries (docs: api/versioning)."""


def check_api_version(headers: Mapping[str, object]) -> None:
    """Raise ``ModelCallFailed`` unless ``headers`` (the SDK's default headers) send
    ``anthropic-version: API_VERSION``."""
    sent = headers.get("anthropic-version")
    if sent != API_VERSION:
        raise ModelCallFailed(
            f"The installed anthropic SDK sends anthropic-version {sent!r}, but plancord speaks "
            f"the Messages API version {API_VERSION}; install the SDK release pyproject.toml "
            "names (anthropic>=2.15,<2.16)."
        )
