"""The models the config names: retired ones (every call would fail), ones about to retire,
and thinking or effort settings a model takes differently from how they are written.

The config itself cannot say this (it sits below the model table); the client refuses a
retired model before sending, with the same sentence, so a retired id is never a bare 404."""

from __future__ import annotations

from datetime import UTC, datetime

from plancord.config import Config
from plancord.doctor.findings import Check, failed, warned
from plancord.llm.models import RETIRED_MODELS, retired_model_message
from plancord.llm.thinking import mapping_notes


def _places(config: Config) -> list[tuple[str, str, bool | None, str | None]]:
    """(where, model, thinking, effort) for ``anthropic`` and every ``agents.<name>``."""
    anthropic = config.anthropic
    places: list[tuple[str, str, bool | None, str | None]] = [
        ("anthropic.model", anthropic.model, anthropic.thinking, anthropic.effort)
    ]
    for name, agent in config.agents.items():
        thinking = agent.thinking if agent.thinking is not None else anthropic.thinking
        places.append(
            (
                f"agents.{name}.model" if agent.model else f"agents.{name}",
                agent.model or anthropic.model,
                thinking,
                agent.effort or anthropic.effort,
            )
        )
    return places


def check_models(config: Config) -> list[Check]:
    """A line per problem; none when every model is current and takes its settings as
    written (a healthy host's report stays as it was)."""
    checks: list[Check] = []
    today = datetime.now(UTC).date()
    for where, model, thinking, effort in _places(config):
        retired = retired_model_message(model, today)
        if retired is not None:
            checks.append(failed(f"{where} {model}", retired, "set a current model id"))
            continue
        retirement = RETIRED_MODELS.get(model)
        if retirement is not None:
            checks.append(
                warned(
                    f"{where} {model}",
                    f"{model} is deprecated and retires on {retirement.retired_on:%Y-%m-%d}",
                    f"move to {retirement.replacement} before then",
                )
            )
        for note in mapping_notes(model, thinking=thinking, effort=effort):
            checks.append(warned(f"{where} thinking", note, "change thinking or effort"))
    return checks
