"""The config file and the environment: defaults, layering, and one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from plancord.config import (
    AgentConfig,
    AnthropicConfig,
    ChannelConfig,
    Config,
    ConfigError,
    DiscordConfig,
    PlanModeOverrides,
    SandboxConfig,
    Secrets,
    ShellConfig,
    load_config,
    parse_config_text,
)
from plancord.config.metrics import MetricsConfig
from plancord.config.schedules import SchedulesConfig
from plancord.core.settings import DefaultPhase, PlanModeSettings, ShellSandbox, ToolVisibility

EXAMPLE = Path(__file__).resolve().parents[1] / "config.example.yaml"


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)

    config = load_config(None)

    assert config.plan_mode == PlanModeSettings()
    assert config.data_dir == tmp_path / "data"
    assert config.database_path == tmp_path / "data" / "plancord.db"
    assert config.log_level == "INFO"
    assert config.discord == DiscordConfig()
    assert config.anthropic == AnthropicConfig()
    assert config.anthropic.model == "claude-sonnet-5-5"
    assert config.shell == ShellConfig()
    assert config.agents == {}
    assert config.channels == {}
    assert config.plan_mode.approval_timeout == timedelta(minutes=30)
    assert config.plan_mode.gathering_idle_timeout == timedelta(minutes=60)
    assert config.plan_mode.default_phase_for("coordinator") is DefaultPhase.PLAN
    for role in ("worker", "proactive", None):
        assert config.plan_mode.default_phase_for(role) is DefaultPhase.OFF


def test_none_uses_config_yaml_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, "log_level: debug\n")
    monkeypatch.chdir(tmp_path)

    assert load_config(None).log_level == "DEBUG"


def test_empty_file_gives_defaults(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, "# nothing set yet\n"))

    assert config.plan_mode == PlanModeSettings()


def test_relative_paths_resolve_against_the_files_folder(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "plancord.yaml"
    path.write_text("data_dir: state\ndatabase: db/bot.sqlite\n", encoding="utf-8")

    config = load_config(path)

    assert config.data_dir == folder / "state"
    assert config.database_path == folder / "db" / "bot.sqlite"


def test_absolute_database_path_is_kept(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, f"database: {tmp_path / 'x.db'}\n"))

    assert config.database_path == tmp_path / "x.db"


def test_a_postgresql_url_selects_postgres_and_stays_out_of_messages(tmp_path: Path) -> None:
    config = load_config(
        write_config(tmp_path, "database: postgresql://bot:s3cret@db.internal:5432/plancord\n")
    )
    assert config.database_target == "postgresql://bot:s3cret@db.internal:5432/plancord"
    assert config.database_path is None
    assert config.database_label == "postgresql://bot:***@db.internal:5432/plancord"
    with pytest.raises(ConfigError, match="names no host"):
        load_config(write_config(tmp_path, "database: postgresql:///plancord\n"))


def test_shards_name_this_process_s_share_of_the_application(tmp_path: Path) -> None:
    url = "database: postgresql://bot@db/plancord\n"
    config = load_config(
        write_config(tmp_path, url + "discord:\n  shard_count: 4\n  shard_ids: [1, 3]\n")
    )
    assert config.discord.sharded
    share = config.discord.share()
    assert (share.count, share.ids) == (4, frozenset({1, 3}))
    assert load_config(write_config(tmp_path, "")).discord.share().everything
    for text, problem in (
        ("discord:\n  shard_ids: [0]\n", "needs shard_count"),
        ("discord:\n  shard_count: 2\n  shard_ids: [2]\n", "outside 0..1"),
        ("discord:\n  shard_count: 2\n  shard_ids: [1, 1]\n", "twice"),
        ("discord:\n  shard_count: 2\n  shard_ids: [1]\n", "share a PostgreSQL database"),
    ):
        with pytest.raises(ConfigError, match=problem):
            load_config(write_config(tmp_path, text))


def example_entries() -> str:
    """The example agents and channels of config.example.yaml, commented out there, as
    YAML: the commented lines from ``# agents:`` on, without their ``# ``."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    start = lines.index("# agents:")
    block = [line.removeprefix("#").removeprefix(" ") for line in lines[start:]]
    assert all(line.startswith("#") or not line.strip() for line in lines[start:])
    return "\n".join(block) + "\n"


def test_example_file_loads_and_every_value_in_it_is_the_default() -> None:
    config = load_config(EXAMPLE)

    assert config == Config(data_dir=EXAMPLE.parent / "data")
    assert config.agents == {} and config.channels == {}


def test_example_entries_of_agents_and_channels_load_as_described() -> None:
    config = parse_config_text(example_entries())

    assert config.agent_role("reviewer") == "coordinator"
    reviewer = config.plan_mode_for("reviewer")
    assert reviewer.approval_timeout == timedelta(hours=2)
    assert reviewer.approver_roles == ("Maintainers", "123456789012345678")
    channel = config.plan_mode_for("reviewer", channel_id=234567890123456789)
    assert channel.tool_visibility is ToolVisibility.FILTER


def test_example_file_shows_and_explains_every_key() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    data = {**yaml.safe_load(text), **yaml.safe_load(example_entries())}
    expected = {
        "": Config,
        "discord": DiscordConfig,
        "anthropic": AnthropicConfig,
        "shell": ShellConfig,
        "sandbox": SandboxConfig,
        "plan_mode": PlanModeSettings,
        "agents.reviewer": AgentConfig,
        "channels": None,
        "metrics": MetricsConfig,
        "schedules": SchedulesConfig,
    }
    for dotted, model in expected.items():
        if model is None:
            continue
        section = data
        for part in filter(None, dotted.split(".")):
            section = section[part]
        assert set(section) == set(model.model_fields), dotted
    channel = next(iter(data["channels"].values()))
    assert set(channel) == set(ChannelConfig.model_fields)

    field_names = {
        name
        for model in (
            Config,
            DiscordConfig,
            AnthropicConfig,
            ShellConfig,
            SandboxConfig,
            PlanModeSettings,
            MetricsConfig,
        )
        for name in model.model_fields
    } | set(AgentConfig.model_fields)
    lines = text.splitlines()
    for number, line in enumerate(lines):
        key = line.split(":", 1)[0].strip()
        if ":" in line and not line.lstrip().startswith("#") and key in field_names:
            documented = "#" in line or lines[number - 1].lstrip().startswith("#")
            assert documented, f"config.example.yaml:{number + 1}: {key} has no comment"


def test_plan_mode_overrides_mirror_every_settings_field() -> None:
    assert set(PlanModeOverrides.model_fields) == set(PlanModeSettings.model_fields)
    assert PlanModeOverrides() == PlanModeOverrides(**dict.fromkeys(PlanModeSettings.model_fields))
    for name, field in PlanModeSettings.model_fields.items():
        assert PlanModeOverrides.model_fields[name].metadata == field.metadata, name


@pytest.mark.parametrize(
    ("layer", "problem"),
    [
        ({"max_plan_bytes": 100}, "greater than or equal to 512"),
        ({"approvals": 11}, "less than or equal to 10"),
        ({"budget_usd": 0}, "greater than 0"),
        ({"approval_timeout": "0s"}, "must be longer than zero"),
        ({"max_plan_bytes": True}, "expected a number"),
        ({"nonsense": 1}, "Extra inputs are not permitted"),
    ],
)
def test_a_layer_refuses_what_the_settings_refuse(layer: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        PlanModeOverrides.model_validate(layer)


LAYERED = """\
plan_mode:
  approval_timeout: 10m
  max_plan_bytes: 4096
  approver_roles: [Leads]
agents:
  reviewer:
    role: coordinator
    plan_mode:
      approval_timeout: 20m
      tool_visibility: filter
channels:
  42:
    plan_mode:
      approval_timeout: 40m
"""


def test_layers_global_then_agent_then_stored_then_channel(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, LAYERED))
    stored = PlanModeOverrides(approval_timeout=timedelta(minutes=30), require_approval=False)

    assert config.plan_mode_for().approval_timeout == timedelta(minutes=10)
    assert config.plan_mode_for("someone-else").approval_timeout == timedelta(minutes=10)

    agent = config.plan_mode_for("reviewer")
    assert agent.approval_timeout == timedelta(minutes=20)
    assert agent.tool_visibility is ToolVisibility.FILTER
    assert agent.max_plan_bytes == 4096
    assert agent.approver_roles == ("Leads",)

    with_stored = config.plan_mode_for("reviewer", agent_overrides=stored)
    assert with_stored.approval_timeout == timedelta(minutes=30)
    assert with_stored.require_approval is False
    assert with_stored.tool_visibility is ToolVisibility.FILTER

    everything = config.plan_mode_for("reviewer", channel_id=42, agent_overrides=stored)
    assert everything.approval_timeout == timedelta(minutes=40)
    assert everything.require_approval is False
    assert everything.tool_visibility is ToolVisibility.FILTER
    assert everything.max_plan_bytes == 4096

    assert config.plan_mode_for(channel_id=42).approval_timeout == timedelta(minutes=40)
    assert config.plan_mode_for(channel_id=7).approval_timeout == timedelta(minutes=10)
    assert isinstance(everything, PlanModeSettings)


def test_agent_role(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path, LAYERED))

    assert config.agent_role("reviewer") == "coordinator"
    assert config.agent_role("unknown") is None


def test_default_phase_by_role_merges_key_by_key(tmp_path: Path) -> None:
    text = """\
plan_mode:
  default_phase_by_role:
    worker: plan
agents:
  lead:
    plan_mode:
      default_phase_by_role:
        coordinator: off
"""
    config = load_config(write_config(tmp_path, text))

    assert config.plan_mode.default_phase_by_role == {
        "coordinator": DefaultPhase.PLAN,
        "worker": DefaultPhase.PLAN,
        "proactive": DefaultPhase.OFF,
        "unset": DefaultPhase.OFF,
    }
    lead = config.plan_mode_for("lead")
    assert lead.default_phase_for("coordinator") is DefaultPhase.OFF
    assert lead.default_phase_for("worker") is DefaultPhase.PLAN
    assert lead.default_phase_for("proactive") is DefaultPhase.OFF


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("30m", timedelta(minutes=30)),
        ("90", timedelta(seconds=90)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("45s", timedelta(seconds=45)),
        ("2.5", timedelta(seconds=2.5)),
    ],
)
def test_durations(tmp_path: Path, written: str, expected: timedelta) -> None:
    text = f"plan_mode:\n  approval_timeout: {written}\n  gathering_idle_timeout: {written}\n"
    config = load_config(write_config(tmp_path, text))

    assert config.plan_mode.approval_timeout == expected
    assert config.plan_mode.gathering_idle_timeout == expected
    agent = PlanModeOverrides.model_validate({"approval_timeout": written})
    assert agent.approval_timeout == expected


def test_yaml_words_off_and_on_stay_words(tmp_path: Path) -> None:
    text = "plan_mode:\n  shell_sandbox: off\n  enabled: no\n  require_approval: yes\n"
    config = load_config(write_config(tmp_path, text))

    assert config.plan_mode.shell_sandbox is ShellSandbox.OFF
    assert config.plan_mode.enabled is False
    assert config.plan_mode.require_approval is True


def test_approver_roles_accept_names_and_ids(tmp_path: Path) -> None:
    text = "plan_mode:\n  approver_roles: [Maintainers, 123456789012345678, ' Leads ']\n"
    config = load_config(write_config(tmp_path, text))

    assert config.plan_mode.approver_roles == ("Maintainers", "123456789012345678", "Leads")
    overrides = PlanModeOverrides.model_validate({"approver_roles": 99})
    assert overrides.approver_roles == ("99",)


def test_sections_left_empty_mean_defaults(tmp_path: Path) -> None:
    text = "discord:\nplan_mode:\nagents:\n  helper:\nchannels:\n  5:\n"
    config = load_config(write_config(tmp_path, text))

    assert config.discord == DiscordConfig()
    assert config.agents["helper"] == AgentConfig()
    assert config.channels[5] == ChannelConfig()


def test_config_is_frozen() -> None:
    config = parse_config_text("")

    with pytest.raises(ValueError, match="frozen"):
        config.log_level = "DEBUG"


BAD_FILES = [
    pytest.param(
        "plan_mode:\n  aproval_timeout: 1h\n",
        "config.yaml:2: plan_mode.aproval_timeout: unknown key; did you mean 'approval_timeout'?",
        id="unknown-key",
    ),
    pytest.param(
        "plan_mod:\n  enabled: true\n",
        "config.yaml:1: plan_mod: unknown key; did you mean 'plan_mode'?",
        id="unknown-top-level-key",
    ),
    pytest.param(
        "agents:\n  rev:\n    plan_mode:\n      tool_visibilty: filter\n",
        "config.yaml:4: agents.rev.plan_mode.tool_visibilty: unknown key;"
        " did you mean 'tool_visibility'?",
        id="unknown-agent-key",
    ),
    pytest.param(
        "log_level: INFO\nanthropic:\n  model: claude\n  max_tokens: lots\n",
        "config.yaml:4: anthropic.max_tokens: input should be a valid integer",
        id="wrong-type",
    ),
    pytest.param(
        "discord: 5\n",
        "config.yaml:1: discord: input should be a valid dictionary",
        id="section-not-a-mapping",
    ),
    pytest.param(
        "\nplan_mode:\n  approval_timeout: 3 weeks\n",
        "config.yaml:3: plan_mode.approval_timeout: '3 weeks' is not a duration;"
        " write seconds or text such as '30m', '1h'",
        id="bad-duration",
    ),
    pytest.param(
        "plan_mode:\n  approval_timeout: 1:30\n",
        "config.yaml:2: plan_mode.approval_timeout: '1:30' is not a duration",
        id="clock-time-is-not-a-duration",
    ),
    pytest.param(
        "plan_mode:\n  approval_timeout: 100000000000000000000\n",
        "config.yaml:2: plan_mode.approval_timeout: 100000000000000000000 is too long",
        id="huge-duration",
    ),
    pytest.param(
        "plan_mode:\n  tool_visibility: hidden\n",
        "config.yaml:2: plan_mode.tool_visibility: 'hidden' is not allowed;"
        " use 'stable' or 'filter'",
        id="bad-enum",
    ),
    pytest.param(
        "channels:\n  42:\n    plan_mode:\n      shell_sandbox: maybe\n",
        "config.yaml:4: channels.42.plan_mode.shell_sandbox: 'maybe' is not allowed",
        id="bad-enum-in-channel",
    ),
    pytest.param(
        "plan_mode:\n  approval_timeout: -5\n",
        "config.yaml:2: plan_mode.approval_timeout: must be longer than zero",
        id="negative-timeout",
    ),
    pytest.param(
        "agents:\n  a:\n    plan_mode:\n      gathering_idle_timeout: 0m\n",
        "config.yaml:4: agents.a.plan_mode.gathering_idle_timeout: must be longer than zero",
        id="zero-timeout-in-agent",
    ),
    pytest.param(
        "shell:\n  timeout_seconds: 0\n",
        "config.yaml:2: shell.timeout_seconds: input should be greater than 0",
        id="zero-shell-timeout",
    ),
    pytest.param(
        "plan_mode:\n  max_plan_bytes: 10\n",
        "config.yaml:2: plan_mode.max_plan_bytes: input should be greater than or equal to 512",
        id="plan-too-small",
    ),
    pytest.param(
        "plan_mode:\n  default_phase_by_role:\n    cordinator: plan\n",
        "config.yaml:3: plan_mode.default_phase_by_role.cordinator: 'cordinator' is not a role;"
        " did you mean 'coordinator'?",
        id="unknown-role-key",
    ),
    pytest.param(
        "agents:\n  rev:\n    role: boss\n",
        "config.yaml:3: agents.rev.role: 'boss' is not a role",
        id="unknown-agent-role",
    ),
    pytest.param(
        "agents:\n  'bad name':\n    role: worker\n",
        "config.yaml:2: agents.bad name: 'bad name' is not an agent name",
        id="bad-agent-name",
    ),
    pytest.param(
        "channels:\n  general: {}\n",
        "config.yaml:2: channels.general: 'general' is not a Discord id",
        id="channel-key-not-an-id",
    ),
    pytest.param(
        "log_level: verbose\n",
        "config.yaml:1: log_level: 'verbose' is not a log level",
        id="bad-log-level",
    ),
    pytest.param(
        "log_level: INFO\nlog_level: DEBUG\n",
        "config.yaml:2: log_level: duplicate key",
        id="duplicate-key",
    ),
    pytest.param(
        "log_level: INFO\nplan_mode:\n  enabled: [true\n  max_plan_bytes: 9000\n",
        "config.yaml:4: invalid YAML:",
        id="invalid-yaml",
    ),
    pytest.param(
        "- plan_mode\n- discord\n",
        "config.yaml:1: the top level must be a mapping",
        id="top-level-list",
    ),
    pytest.param(
        "just words\n",
        "config.yaml:1: the top level must be a mapping",
        id="top-level-scalar",
    ),
    pytest.param(
        "discord:\n  dev_guild_id: 1\n  token: abc.def\n",
        "config.yaml:3: discord.token: secrets do not belong in the config file;"
        " remove this key and set the DISCORD_TOKEN environment variable",
        id="discord-token-in-file",
    ),
    pytest.param(
        "anthropic:\n  api_key: sk-ant-xyz\n",
        "config.yaml:2: anthropic.api_key: secrets do not belong in the config file;"
        " remove this key and set the ANTHROPIC_API_KEY environment variable",
        id="api-key-in-file",
    ),
    pytest.param(
        "log_level: verbose\nshell:\n  timeout_seconds: 0\n",
        "config.yaml:1: log_level: 'verbose' is not a log level; use 'DEBUG', 'INFO', 'WARNING'"
        " or 'ERROR'; config.yaml:3: shell.timeout_seconds: input should be greater than 0"
        " (got 0)",
        id="several-problems-first-by-line",
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES)
def test_bad_file_is_one_line_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, expected: str
) -> None:
    write_config(tmp_path, text)
    monkeypatch.chdir(tmp_path)

    with pytest.raises(ConfigError) as caught:
        load_config(Path("config.yaml"))

    message = str(caught.value)
    assert message.startswith(expected)
    assert "\n" not in message
    assert "sk-ant-xyz" not in message
    assert "abc.def" not in message


def test_error_carries_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(write_config(tmp_path, "plan_mode:\n  tool_visibility: hidden\n"))

    assert caught.value.line == 2
    assert caught.value.key == "plan_mode.tool_visibility"


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"

    with pytest.raises(ConfigError) as caught:
        load_config(missing)

    assert str(caught.value) == f"config file not found: {missing}"


def test_parse_config_text_names_its_source() -> None:
    with pytest.raises(ConfigError, match=r"^doctor:1: log_level: "):
        parse_config_text("log_level: loud\n", source="doctor")


def test_secrets_from_env_and_require() -> None:
    secrets = Secrets.from_env({"DISCORD_TOKEN": "tok-123", "ANTHROPIC_API_KEY": "  "})

    secrets.require("DISCORD_TOKEN")
    assert secrets.discord_token is not None
    assert secrets.discord_token.get_secret_value() == "tok-123"
    assert secrets.anthropic_api_key is None
    with pytest.raises(ConfigError) as caught:
        secrets.require("DISCORD_TOKEN", "ANTHROPIC_API_KEY")
    assert str(caught.value) == "ANTHROPIC_API_KEY is not set; export it and run again"


def test_secrets_require_names_every_missing_one() -> None:
    secrets = Secrets.from_env({})

    with pytest.raises(
        ConfigError,
        match=r"^DISCORD_TOKEN and ANTHROPIC_API_KEY are not set; export them and run again$",
    ):
        secrets.require()
    with pytest.raises(ValueError, match="unknown secret"):
        secrets.require("GITHUB_TOKEN")


def test_blank_secret_given_directly_counts_as_missing() -> None:
    secrets = Secrets.model_validate({"discord_token": " ", "anthropic_api_key": "k"})

    with pytest.raises(ConfigError, match=r"^DISCORD_TOKEN is not set"):
        secrets.require("DISCORD_TOKEN")


def test_secrets_never_appear_in_repr_or_dumps() -> None:
    secrets = Secrets.from_env(
        {"DISCORD_TOKEN": "discord-secret-value", "ANTHROPIC_API_KEY": "sk-ant-secret-value"}
    )

    for shown in (
        repr(secrets),
        str(secrets),
        secrets.model_dump_json(),
        str(secrets.model_dump()),
    ):
        assert "discord-secret-value" not in shown
        assert "sk-ant-secret-value" not in shown


def test_secrets_default_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "from-process")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)

    secrets = Secrets.from_env()

    assert secrets.discord_token is not None
    assert secrets.discord_token.get_secret_value() == "from-process"
    assert secrets.anthropic_api_key is None


@pytest.mark.parametrize("command", ["run", "migrate"])
def test_cli_bad_config_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    bad_file = write_config(tmp_path, "plan_mode:\n  approval_timeout: 3 weeks\n")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONWARNINGS"}

    result = subprocess.run(
        [sys.executable, "-m", "plancord.command.main", command, "--config", str(bad_file)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"plancord: {bad_file}:2: plan_mode.approval_timeout: ")


def test_thinking_and_effort_reach_the_runtime_settings(tmp_path: Path) -> None:
    from plancord.app.runtime_parts import runtime_settings

    config = load_config(
        write_config(
            tmp_path,
            "anthropic:\n  effort: medium\n  thinking: false\n"
            "agents:\n  deep:\n    effort: xhigh\n    thinking: true\n",
        )
    )
    settings = runtime_settings(config)
    assert settings.thinking.effort == "medium" and settings.thinking.enabled is False
    deep = settings.agents["deep"]
    assert (deep.effort, deep.thinking) == ("xhigh", True)
    assert load_config(write_config(tmp_path, "")).anthropic.thinking is None


def test_an_effort_the_api_does_not_define_is_a_config_error(tmp_path: Path) -> None:
    for text in (
        "anthropic:\n  effort: huge\n",
        "anthropic:\n  effort: High\n",
        "agents:\n  a:\n    effort: 3\n",
    ):
        with pytest.raises(
            ConfigError, match=r"effort: .* use 'low', 'medium', 'high', 'xhigh' or 'max'"
        ):
            load_config(write_config(tmp_path, text))
