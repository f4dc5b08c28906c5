"""The operator's configuration: one YAML file for settings, the environment for secrets.

The bot, the migration runner and ``plancord doctor`` all start from a ``Config``. A file that
cannot be used must stop them with one line an operator can act on (file, line, key, what is
wrong), never a traceback, so every failure here becomes a ``ConfigError`` with that line as
its message. Plan-mode knobs can be set globally, per agent and per channel;
``Config.plan_mode_for`` merges those layers into the one ``PlanModeSettings`` the core uses.
Secrets never live in the file: ``Secrets`` reads them from the environment.

One module per concept: ``fields`` (the error and the shared field types), ``sections`` (each
part of the file), ``model`` (``Config`` and ``Secrets``), ``loading`` (YAML, line numbers,
readable errors).
"""

from plancord.config.fields import AGENT_ROLES, ConfigError
from plancord.config.loading import DATA_DIR_ENV, load_config, parse_config_text
from plancord.config.model import Config, Secrets
from plancord.config.plan_mode_layer import PlanModeOverrides
from plancord.config.sections import (
    AgentConfig,
    AnthropicConfig,
    ChannelConfig,
    DiscordConfig,
    SandboxConfig,
    ShellConfig,
)

__all__ = [
    "AGENT_ROLES",
    "DATA_DIR_ENV",
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
