"""The ``mcp_servers:`` section: the MCP servers an agent may use, and how their tools are
classified for the gate.

Why this exists: an MCP server's tools reach the model like built-in tools, so the operator
must say, per server, how each is judged (``read_only`` / ``mutating`` globs, or trusting the
server's own hints) and what the server may see (its command runs in the agent's sandbox;
environment values come only from files named here, never from the bot's environment).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, field_validator, model_validator

from plancord.config.fields import _MODEL_CONFIG, ConfigPath, PositiveSeconds

#: A server's name, as it appears in ``mcp__<server>__<tool>``.
SERVER_NAME = re.compile(r"^[A-Za-z0-9-]{1,24}$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*_FILE$")


class McpServerConfig(BaseModel):
    """One MCP server: ``command`` (+ ``args``) for a stdio server run in the agent's
    sandbox, or ``url`` for a streamable HTTP server (only for agents with ``network``)."""

    model_config = _MODEL_CONFIG

    command: str | None = None
    args: list[str] = []
    url: str | None = None
    env: dict[str, ConfigPath] = {}
    """``NAME_FILE: /path``: the server gets ``NAME`` set to the file's content."""
    mounts: list[ConfigPath] = []
    """Directories the server's own code lives in, shown to it read-only."""
    writable_workspace: bool | Literal["executing"] = False
    """Whether the server sees the agent's workspace writable; read-only unless set.
    ``true``: writable, so the server runs only outside plan mode. ``executing``: one entry
    for both phases, the workspace read-only while planning (the server's read-only tools
    work then) and writable once a plan executes."""
    network_in_plan_mode: bool = False
    """No longer honoured: while planning no server reaches the network. ``true`` is a
    configuration error, so a config that relied on it does not run a server unexpectedly
    offline or online."""
    read_only: list[str] = []
    mutating: list[str] = []
    trust_hints: bool = False
    unclassified: Literal["error", "mutating"] = "error"
    timeout_seconds: PositiveSeconds = 60.0
    startup_seconds: PositiveSeconds = 30.0

    @field_validator("env")
    @classmethod
    def _file_secrets(cls, value: dict[str, Path]) -> dict[str, Path]:
        for name in value:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(
                    f"env {name!r}: only NAME_FILE entries naming a file are allowed; the "
                    "server gets NAME set to the file's content"
                )
        return value

    @field_validator("mounts")
    @classmethod
    def _absolute(cls, value: list[Path]) -> list[Path]:
        for path in value:
            if not path.is_absolute():
                raise ValueError(f"mount {str(path)!r} is not an absolute path")
        return value

    @field_validator("trust_hints", "network_in_plan_mode", mode="before")
    @classmethod
    def _bool(cls, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value

    @field_validator("writable_workspace", mode="before")
    @classmethod
    def _writable(cls, value: Any) -> Any:
        if not isinstance(value, bool) and value != "executing":
            raise ValueError(
                "must be true, false or executing (read-only while planning, writable "
                "while executing)"
            )
        return value

    @field_validator("network_in_plan_mode")
    @classmethod
    def _never_online_while_planning(cls, value: bool) -> bool:
        if value:
            raise ValueError(
                "network_in_plan_mode: true is no longer allowed: while planning every MCP "
                "server runs read-only and without the network, and a server that needs the "
                "network runs only outside plan mode; remove the key"
            )
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either `command` (a stdio server) or `url` (streamable HTTP)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"url {self.url!r} is not an http(s) URL")
        if self.url is not None and (
            self.env or self.mounts or self.args or self.writable_workspace
        ):
            raise ValueError(
                "env, mounts, args and writable_workspace apply to stdio servers (`command`) only"
            )
        return self

    @property
    def stdio(self) -> bool:
        return self.command is not None


def _server_names(value: Any) -> Any:
    if isinstance(value, dict):
        for name in value:
            if not isinstance(name, str) or not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"MCP server name {name!r}: use 1-24 letters, digits or '-' "
                    "(it becomes part of each tool's name, mcp__<server>__<tool>)"
                )
    return value


McpServers = Annotated[dict[str, McpServerConfig], BeforeValidator(_server_names)]
