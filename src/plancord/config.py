"""The operator's configuration: one YAML file for settings, the environment for secrets.

The bot, the migration runner and ``plancord doctor`` all start from a ``Config``. A file that
cannot be used must stop them with one line an operator can act on (file, line, key, what is
wrong), never a traceback, so every failure here becomes a ``ConfigError`` with that line as
its message. Plan-mode knobs can be set globally, per agent and per channel;
``Config.plan_mode_for`` merges those layers into the one ``PlanModeSettings`` the core uses.
Secrets never live in the file: ``Secrets`` reads them from the environment.
"""

from __future__ import annotations

import difflib
import math
import os
import re
import types
from collections.abc import Iterator, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)
from pydantic_core import ErrorDetails
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from plancord.core.drift import DriftPolicy
from plancord.core.settings import (
    DEFAULT_PHASE_BY_ROLE,
    Access,
    ApprovalPolicy,
    DefaultPhase,
    PlanModeSettings,
    ShellSandbox,
    ToolVisibility,
    parse_duration,
)
from plancord.core.shell.sandbox.policy import LayerChoice, Limits, SandboxSettings

__all__ = [
    "AGENT_ROLES",
    "AgentConfig",
    "AnthropicConfig",
    "ChannelConfig",
    "Config",
    "ConfigError",
    "DiscordConfig",
    "PlanModeOverrides",
    "SandboxConfig",
    "Secrets",
    "ShellConfig",
    "load_config",
    "parse_config_text",
]

AGENT_ROLES: tuple[str, ...] = ("coordinator", "worker", "proactive")
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")
DEFAULT_CONFIG_FILE = Path("config.yaml")

_MODEL_CONFIG = ConfigDict(extra="forbid", frozen=True)
_AGENT_NAME = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_MAX_SNOWFLAKE = 2**63 - 1
_SECONDS = re.compile(r"^\s*\d+(?:\.\d+)?\s*$")
_SECRET_KEYS: dict[str, str] = {
    "token": "DISCORD_TOKEN",
    "bot_token": "DISCORD_TOKEN",
    "discord_token": "DISCORD_TOKEN",
    "api_key": "ANTHROPIC_API_KEY",
    "apikey": "ANTHROPIC_API_KEY",
    "anthropic_api_key": "ANTHROPIC_API_KEY",
}
_ENV_FIELDS: dict[str, str] = {
    "DISCORD_TOKEN": "discord_token",
    "ANTHROPIC_API_KEY": "anthropic_api_key",
}


class ConfigError(Exception):
    """A configuration that cannot be used; ``str(exc)`` is one line naming file, line and key."""

    def __init__(self, message: str, *, line: int | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.key = key


def _suggestion(word: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _one_of(options: Sequence[str]) -> str:
    quoted = [repr(option) for option in options]
    return ", ".join(quoted[:-1]) + f" or {quoted[-1]}" if len(quoted) > 1 else quoted[0]


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true/false")
    return value


def _not_empty(value: Any) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError("must not be empty")
    return value


def _snowflake(value: Any) -> Any:
    """Discord ids: positive integers that fit SQLite's INTEGER, given as numbers or digit text."""
    if isinstance(value, str) and value.strip().isdecimal():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= _MAX_SNOWFLAKE:
        raise ValueError(f"{value!r} is not a Discord id; write the number Discord shows")
    return value


def _agent_name(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not _AGENT_NAME.match(value):
        raise ValueError(
            f"{value!r} is not an agent name; use letters, digits, - and _ (1 to 32 characters)"
        )
    return value


def _role_key(value: str) -> str:
    if value not in DEFAULT_PHASE_BY_ROLE:
        raise ValueError(
            f"{value!r} is not a role{_suggestion(value, list(DEFAULT_PHASE_BY_ROLE))}"
            f" (roles: {', '.join(DEFAULT_PHASE_BY_ROLE)})"
        )
    return value


def _duration(value: Any) -> Any:
    if isinstance(value, str) and _SECONDS.match(value):
        value = float(value)
    return parse_duration(value)


def _approver_roles(value: Any) -> Any:
    """Role names or Discord role ids, as strings; one value alone means a list of one."""
    if value is None:
        return None
    items = [value] if isinstance(value, str | int) else value
    if not isinstance(items, list | tuple):
        return value
    roles: list[str] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, str | int):
            raise ValueError(f"{item!r} is not a role name or role id")
        role = str(item).strip()
        if not role:
            raise ValueError("a role name must not be empty")
        if role not in roles:
            roles.append(role)
    return tuple(roles)


def _none_is_empty(value: Any) -> Any:
    """A YAML section whose keys are all commented out reads as null; treat it as empty."""
    return {} if value is None else value


PositiveInt = Annotated[int, BeforeValidator(_not_bool), Field(gt=0)]
NonNegativeInt = Annotated[int, BeforeValidator(_not_bool), Field(ge=0)]
PositiveSeconds = Annotated[float, BeforeValidator(_not_bool), Field(gt=0, allow_inf_nan=False)]
Snowflake = Annotated[int, BeforeValidator(_snowflake)]
AgentName = Annotated[str, BeforeValidator(_agent_name)]
RoleKey = Annotated[str, AfterValidator(_role_key)]
ConfigPath = Annotated[Path, BeforeValidator(_not_empty)]


class PlanModeOverrides(BaseModel):
    """One layer of plan-mode settings; ``None`` means "inherit from the layer below"."""

    model_config = _MODEL_CONFIG

    enabled: bool | None = None
    require_approval: bool | None = None
    approval_timeout: timedelta | None = None
    gathering_idle_timeout: timedelta | None = None
    default_phase_by_role: dict[RoleKey, DefaultPhase] | None = None
    approver_roles: tuple[str, ...] | None = None
    tool_visibility: ToolVisibility | None = None
    max_plan_bytes: int | None = Field(default=None, ge=512, le=1_048_576)
    shell_sandbox: ShellSandbox | None = None
    drift: DriftPolicy | None = None
    approval: ApprovalPolicy | None = None
    approvals: int | None = Field(default=None, ge=1, le=10)
    access: Access | None = None

    @field_validator("approval_timeout", "gathering_idle_timeout", mode="before")
    @classmethod
    def _parse_duration(cls, value: Any) -> Any:
        return _duration(value)

    @field_validator("approval_timeout", "gathering_idle_timeout")
    @classmethod
    def _positive(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value <= timedelta(0):
            raise ValueError("must be longer than zero")
        return value

    @field_validator("approver_roles", mode="before")
    @classmethod
    def _normalise_roles(cls, value: Any) -> Any:
        return _approver_roles(value)

    @field_validator("max_plan_bytes", mode="before")
    @classmethod
    def _reject_bool(cls, value: Any) -> Any:
        return _not_bool(value)

    def apply_to(self, base: PlanModeSettings) -> PlanModeSettings:
        """``base`` with every field this layer sets replaced; roles merge key by key."""
        values = base.model_dump()
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                continue
            if name == "default_phase_by_role":
                value = {**base.default_phase_by_role, **value}
            values[name] = value
        return PlanModeSettings.model_validate(values)


def _global_plan_mode(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Validate the file's global layer like any other layer, then apply it to the defaults."""
    if isinstance(value, Mapping):
        return handler(PlanModeOverrides.model_validate(value).apply_to(PlanModeSettings()))
    return handler(value)


class AgentConfig(BaseModel):
    """Per-agent defaults from the file; agents are also created at runtime through Discord."""

    model_config = _MODEL_CONFIG

    role: str | None = None
    model: str | None = None
    network: bool = False
    thinking: bool | None = None
    plan_mode: PlanModeOverrides = PlanModeOverrides()

    @field_validator("network", mode="before")
    @classmethod
    def _network_bool(cls, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError("network is true or false")
        return value

    @field_validator("role", mode="before")
    @classmethod
    def _known_role(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        role = value.strip().lower()
        if role not in AGENT_ROLES:
            raise ValueError(
                f"{value!r} is not a role{_suggestion(role, AGENT_ROLES)}"
                f" (roles: {', '.join(AGENT_ROLES)}; leave it out for none)"
            )
        return role

    @field_validator("model", mode="before")
    @classmethod
    def _model_not_empty(cls, value: Any) -> Any:
        return _not_empty(value)

    @field_validator("plan_mode", mode="before")
    @classmethod
    def _plan_mode_none(cls, value: Any) -> Any:
        return _none_is_empty(value)


class ChannelConfig(BaseModel):
    """Overrides for one Discord channel; they win over every other layer."""

    model_config = _MODEL_CONFIG

    plan_mode: PlanModeOverrides = PlanModeOverrides()

    @field_validator("plan_mode", mode="before")
    @classmethod
    def _plan_mode_none(cls, value: Any) -> Any:
        return _none_is_empty(value)


class DiscordConfig(BaseModel):
    model_config = _MODEL_CONFIG

    dev_guild_id: Snowflake | None = None
    admin_role_ids: list[Snowflake] = []


class AnthropicConfig(BaseModel):
    model_config = _MODEL_CONFIG

    base_url: str | None = None
    model: str = "claude-sonnet-5-5"
    max_tokens: PositiveInt = 8192
    max_iterations: PositiveInt = 50
    max_retries: NonNegativeInt = 2
    timeout_seconds: PositiveSeconds = 600
    max_concurrent_requests: PositiveInt = 16
    context_window_tokens: PositiveInt = 200_000
    thinking: bool = False
    thinking_budget_tokens: PositiveInt = 4096

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not a URL; it starts with http:// or https://")
        return value

    @field_validator("model", mode="before")
    @classmethod
    def _model_not_empty(cls, value: Any) -> Any:
        return _not_empty(value)


class ShellConfig(BaseModel):
    model_config = _MODEL_CONFIG

    timeout_seconds: PositiveSeconds = 60
    max_output_bytes: PositiveInt = 100_000


_MIB = 1024 * 1024


class SandboxConfig(BaseModel):
    """Where agent processes run: the layer, and the limits of each command.

    ``layer: auto`` uses bubblewrap, or the Landlock fallback where bubblewrap cannot start;
    naming a layer requires it; ``off`` runs agent commands without a sandbox (the operator
    accepts that an agent can then reach everything the bot can).
    """

    model_config = _MODEL_CONFIG

    layer: LayerChoice = LayerChoice.AUTO
    memory_mb: PositiveInt = 2048
    processes: PositiveInt = 256
    file_size_mb: PositiveInt = 1024
    cpu_seconds: PositiveInt = 600
    tmp_mb: PositiveInt = 512
    shared_paths: list[ConfigPath] = []

    @field_validator("shared_paths")
    @classmethod
    def _absolute(cls, value: list[Path]) -> list[Path]:
        for path in value:
            if not path.expanduser().is_absolute():
                raise ValueError(f"{str(path)!r} is not an absolute path")
        return [path.expanduser() for path in value]

    def settings(self, network_agents: frozenset[str]) -> SandboxSettings:
        limits = Limits(
            memory_bytes=self.memory_mb * _MIB,
            processes=self.processes,
            file_size_bytes=self.file_size_mb * _MIB,
            cpu_seconds=self.cpu_seconds,
            tmp_bytes=self.tmp_mb * _MIB,
        )
        return SandboxSettings(
            layer=self.layer,
            limits=limits,
            network_agents=network_agents,
            shared=tuple(path.resolve() for path in self.shared_paths),
        )


class Config(BaseModel):
    """The whole file, validated; relative paths are already resolved against its folder."""

    model_config = _MODEL_CONFIG

    data_dir: ConfigPath = Field(default=Path("data"), validate_default=True)
    database: ConfigPath | None = None
    workspace_roots: list[ConfigPath] = []
    log_level: str = "INFO"
    discord: DiscordConfig = Field(default_factory=DiscordConfig)
    anthropic: AnthropicConfig = Field(default_factory=AnthropicConfig)
    shell: ShellConfig = Field(default_factory=ShellConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    plan_mode: Annotated[PlanModeSettings, WrapValidator(_global_plan_mode)] = Field(
        default_factory=PlanModeSettings
    )
    agents: dict[AgentName, AgentConfig] = {}
    channels: dict[Snowflake, ChannelConfig] = {}

    @field_validator(
        "discord",
        "anthropic",
        "shell",
        "sandbox",
        "plan_mode",
        "agents",
        "channels",
        mode="before",
    )
    @classmethod
    def _section_none(cls, value: Any) -> Any:
        return _none_is_empty(value)

    @field_validator("agents", "channels", mode="before")
    @classmethod
    def _entry_none(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {key: _none_is_empty(entry) for key, entry in value.items()}
        return value

    @field_validator("workspace_roots")
    @classmethod
    def _resolve_roots(cls, value: list[Path], info: ValidationInfo) -> list[Path]:
        base_dir = info.context.get("base_dir") if isinstance(info.context, dict) else None
        if base_dir is None:
            return [v.expanduser() for v in value]
        return [Path(base_dir) / v.expanduser() for v in value]

    @field_validator("data_dir", "database")
    @classmethod
    def _resolve(cls, value: Path | None, info: ValidationInfo) -> Path | None:
        if value is None:
            return None
        base_dir = info.context.get("base_dir") if isinstance(info.context, dict) else None
        return value.expanduser() if base_dir is None else Path(base_dir) / value.expanduser()

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"{value!r} is not a log level; use {_one_of(LOG_LEVELS)}")
        return level

    @property
    def database_path(self) -> Path:
        """The SQLite file: ``database`` when set, else ``data_dir/plancord.db``."""
        return self.database if self.database is not None else self.data_dir / "plancord.db"

    def plan_mode_for(
        self,
        agent: str | None = None,
        channel_id: int | None = None,
        agent_overrides: PlanModeOverrides | None = None,
    ) -> PlanModeSettings:
        """The settings for one agent in one channel, later layers winning field by field.

        Layers: global < the file's ``agents[agent]`` < ``agent_overrides`` (stored per agent
        in the database at runtime) < the file's ``channels[channel_id]``.
        """
        layers: list[PlanModeOverrides] = []
        if agent is not None and agent in self.agents:
            layers.append(self.agents[agent].plan_mode)
        if agent_overrides is not None:
            layers.append(agent_overrides)
        if channel_id is not None and channel_id in self.channels:
            layers.append(self.channels[channel_id].plan_mode)
        settings = self.plan_mode
        for layer in layers:
            settings = layer.apply_to(settings)
        return settings

    @property
    def sandbox_settings(self) -> SandboxSettings:
        """The sandbox settings, with the agents the file allows the network (executing only)."""
        allowed = frozenset(name for name, agent in self.agents.items() if agent.network)
        return self.sandbox.settings(allowed)

    def agent_role(self, agent: str) -> str | None:
        """The role the file gives ``agent``, or ``None`` when it gives none."""
        entry = self.agents.get(agent)
        return entry.role if entry is not None else None


class Secrets(BaseModel):
    """Tokens from the environment; their values never appear in repr, str or dumps."""

    model_config = _MODEL_CONFIG

    discord_token: SecretStr | None = None
    anthropic_api_key: SecretStr | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Secrets:
        """Read ``DISCORD_TOKEN`` and ``ANTHROPIC_API_KEY``; blank values count as unset.

        ``NAME_FILE`` (the Docker secrets convention) names a file holding the value
        instead; setting both is a ConfigError, and so is a file that cannot be read.
        """
        values: dict[str, str | None] = {}
        for env_name, field in _ENV_FIELDS.items():
            raw = environ.get(env_name, "").strip()
            file_name = environ.get(f"{env_name}_FILE", "").strip()
            if raw and file_name:
                raise ConfigError(
                    f"both {env_name} and {env_name}_FILE are set; keep one", key=env_name
                )
            if file_name:
                try:
                    raw = Path(file_name).read_text(encoding="utf-8").strip()
                except (OSError, UnicodeDecodeError) as exc:
                    problem = getattr(exc, "strerror", None) or str(exc)
                    raise ConfigError(
                        f"{env_name}_FILE: cannot read {file_name}: {problem}",
                        key=f"{env_name}_FILE",
                    ) from None
            values[field] = raw or None
        return cls.model_validate(values)

    @staticmethod
    def environment_names() -> list[str]:
        """Every variable a secret may come from, ``_FILE`` forms included."""
        return [name for env in _ENV_FIELDS for name in (env, f"{env}_FILE")]

    def require(self, *names: str) -> None:
        """Raise ``ConfigError`` for the first of ``names`` (default: all) that is unset or blank.

        Names are the environment variables: ``DISCORD_TOKEN``, ``ANTHROPIC_API_KEY``.
        """
        for name in names or tuple(_ENV_FIELDS):
            field = _ENV_FIELDS.get(name.upper())
            if field is None:
                raise ValueError(f"unknown secret {name!r}; known: {', '.join(_ENV_FIELDS)}")
            secret: SecretStr | None = getattr(self, field)
            if secret is None or not secret.get_secret_value().strip():
                raise ConfigError(
                    f"{name.upper()} is not set; export it and run again", key=name.upper()
                )


_KeyPath = tuple[str, ...]


class _Loader(yaml.SafeLoader):
    """Safe YAML with YAML 1.2 scalars: only true/false are booleans and only plain decimals
    are integers, so ``shell_sandbox: off`` stays the word "off" and ``1:30`` is not 90."""


_Loader.yaml_implicit_resolvers = {
    first: [
        (tag, regexp)
        for tag, regexp in resolvers
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:int")
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^[-+]?(?:0|[1-9][0-9_]*)$"),
    list("-+0123456789"),
)


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


class _Index(int):
    """A list position in a key path, shown as ``[n]`` rather than as a key."""


def _dotted(path: Sequence[object]) -> str:
    text = ""
    for part in path:
        if isinstance(part, _Index) and text:
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def _record_lines(
    node: Node, path: _KeyPath, lines: dict[_KeyPath, int], source: str, stack: set[int]
) -> None:
    """Note the line of every key and list item under ``node``; reject duplicate keys."""
    if id(node) in stack:
        return
    stack.add(id(node))
    if isinstance(node, MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = str(key_node.value)
            key_path = (*path, key)
            if key in seen:
                raise ConfigError(
                    f"{source}:{_line(key_node)}: {_dotted(key_path)}: duplicate key;"
                    " each key may appear once",
                    line=_line(key_node),
                    key=_dotted(key_path),
                )
            seen.add(key)
            lines[key_path] = _line(key_node)
            _record_lines(value_node, key_path, lines, source, stack)
    elif isinstance(node, SequenceNode):
        for index, item in enumerate(node.value):
            item_path = (*path, str(index))
            lines[item_path] = _line(item)
            _record_lines(item, item_path, lines, source, stack)
    stack.discard(id(node))


def _load_yaml(text: str, source: str) -> tuple[Any, dict[_KeyPath, int]]:
    lines: dict[_KeyPath, int] = {}
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, lines
        lines[()] = _line(node)
        _record_lines(node, (), lines, source, set())
        return loader.construct_document(node), lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = exc.problem or exc.context or "unreadable"
        context = f" ({exc.context})" if exc.problem and exc.context else ""
        raise ConfigError(
            " ".join(f"{where}: invalid YAML: {problem}{context}".split()),
            line=mark.line + 1 if mark is not None else None,
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(" ".join(f"{source}: invalid YAML: {exc}".split())) from None
    finally:
        loader.dispose()


def _walk_keys(data: Any, path: _KeyPath, stack: set[int]) -> Iterator[_KeyPath]:
    if id(data) in stack:
        return
    stack.add(id(data))
    if isinstance(data, dict):
        for key, value in data.items():
            yield (*path, str(key))
            yield from _walk_keys(value, (*path, str(key)), stack)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            yield from _walk_keys(item, (*path, str(index)), stack)
    stack.discard(id(data))


def _reject_secrets(data: Any, lines: Mapping[_KeyPath, int], source: str) -> None:
    for path in _walk_keys(data, (), set()):
        if path[:1] == ("agents",) and len(path) == 2:
            continue
        env_name = _SECRET_KEYS.get(path[-1].lower().replace("-", "_"))
        if env_name is not None:
            line = lines.get(path)
            where = f"{source}:{line}" if line is not None else source
            raise ConfigError(
                f"{where}: {_dotted(path)}: secrets do not belong in the config file;"
                f" remove this key and set the {env_name} environment variable",
                line=line,
                key=_dotted(path),
            )


def _find_key(mapping: Mapping[Any, Any], part: object) -> tuple[bool, Any]:
    if part in mapping:
        return True, part
    for key in mapping:
        if str(key) == str(part):
            return True, key
    return False, None


def _data_path(data: Any, loc: Sequence[int | str]) -> list[object]:
    """The keys of ``loc`` that exist in the input, without pydantic's type and union tags."""
    path: list[object] = []
    node = data
    for part in loc:
        if part == "[key]":
            break
        if isinstance(node, Mapping):
            found, key = _find_key(node, part)
            if found:
                path.append(key)
                node = node[key]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(_Index(part))
            node = node[part]
    return path


def _model_at(path: Sequence[object]) -> type[BaseModel] | None:
    annotation: Any = Config
    for part in [*path, None]:
        while True:
            origin = get_origin(annotation)
            if origin is Annotated:
                annotation = get_args(annotation)[0]
            elif origin in (Union, types.UnionType):
                members = [arg for arg in get_args(annotation) if arg is not type(None)]
                if len(members) != 1:
                    return None
                annotation = members[0]
            else:
                break
        if part is None:
            break
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
        else:
            return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(error: ErrorDetails, path: Sequence[object]) -> str:
    kind = error["type"]
    message = error["msg"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden" and path:
        model = _model_at(path[:-1])
        allowed = list(model.model_fields) if model is not None else []
        listing = f" (allowed: {', '.join(allowed)})" if allowed else ""
        hint = _suggestion(str(path[-1]), allowed)
        return f"unknown key{hint}" if hint else f"unknown key{listing}"
    if kind == "value_error":
        return str(ctx.get("error", message.removeprefix("Value error, ")))
    if kind in ("enum", "literal_error"):
        return f"{_short(error['input'])} is not allowed; use {ctx.get('expected', '')}"
    return f"{message[:1].lower()}{message[1:]} (got {_short(error['input'])})"


def _validation_message(
    exc: ValidationError, data: Any, lines: Mapping[_KeyPath, int], source: str
) -> ConfigError:
    problems: list[tuple[int, str, int | None, str]] = []
    for error in exc.errors(include_url=False):
        path = _data_path(data, error["loc"])
        key_path = tuple(str(part) for part in path)
        line = next(
            (lines[key_path[:n]] for n in range(len(key_path), -1, -1) if key_path[:n] in lines),
            None,
        )
        detail = _describe(error, path)
        if error["loc"][-1:] == ("[key]",) and error["type"] != "value_error":
            detail = f"this key is not valid: {detail}"
        problems.append((line or 0, _dotted(path), line, detail))
    problems.sort(key=lambda problem: problem[0] if problem[2] is not None else math.inf)
    _, key, line, detail = problems[0]
    where = f"{source}:{line}" if line is not None else source
    more = len(problems) - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    return ConfigError(" ".join(f"{where}: {key}: {detail}{tail}".split()), line=line, key=key)


def parse_config_text(
    text: str, *, source: str = "<config>", base_dir: Path | None = None
) -> Config:
    """Validate YAML ``text``; errors name ``source``; relative paths resolve against ``base_dir``
    (the current directory when it is ``None``)."""
    data, lines = _load_yaml(text, source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        line = lines.get((), 1)
        kind = "a list" if isinstance(data, list) else f"the value {_short(data)}"
        raise ConfigError(
            f"{source}:{line}: the top level must be a mapping of keys such as 'plan_mode:',"
            f" not {kind}",
            line=line,
        )
    _reject_secrets(data, lines, source)
    context = {"base_dir": (base_dir if base_dir is not None else Path.cwd()).absolute()}
    try:
        return Config.model_validate(data, context=context)
    except ValidationError as exc:
        raise _validation_message(exc, data, lines, source) from None


DATA_DIR_ENV = "PLANCORD_DATA_DIR"


def load_config(path: Path | None) -> Config:
    """Load ``path``; with ``None``, ``./config.yaml`` when it exists, else the defaults.

    ``$PLANCORD_DATA_DIR``, when set, wins over the file's ``data_dir``: the Docker image sets
    it to its volume, so any config mounted into the container keeps its data there."""
    config = _load_config_file(path)
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    if override:
        config = config.model_copy(update={"data_dir": Path(override).expanduser().absolute()})
    return config


def _load_config_file(path: Path | None) -> Config:
    if path is None:
        if not DEFAULT_CONFIG_FILE.is_file():
            return parse_config_text("", source="<defaults>")
        path = DEFAULT_CONFIG_FILE
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    if path.is_dir():
        raise ConfigError(f"config file is a directory, not a file: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the file as UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    return parse_config_text(text, source=str(path), base_dir=path.parent)
