"""The models the config names: retired ones (every call would fail), ones about to retire,
and thinking or effort settings a model takes differently from how they are written.

The config itself cannot say this (it sits below the model table); the client refuses a
retired model before sending, with the same sentence, so a retired id is never a bare 404."""

from __future__ import annotations

from datetime import UTC, date, datetime

from plancord.config import Config
from plancord.doctor.findings import Check, failed, warned
from plancord.llm.models import RETIRED_MODELS, retired_model_message
from plancord.llm.thinking import mapping_notes


def _places(config: Config) -> list[tuple[str, bool, str, bool | None, str | None]]:
    """(section, whether it names the model, model, thinking, effort) for ``anthropic`` and
    every ``agents.<name>``, with what an agent leaves out taken from ``anthropic``."""
    anthropic = config.anthropic
    places: list[tuple[str, bool, str, bool | None, str | None]] = [
        ("anthropic", True, anthropic.model, anthropic.thinking, anthropic.effort)
    ]
    for name, agent in config.agents.items():
        places.append(
            (
                f"agents.{name}",
                agent.model is not None,
                agent.model or anthropic.model,
                agent.thinking if agent.thinking is not None else anthropic.thinking,
                agent.effort or anthropic.effort,
            )
        )
    return places


def check_models(config: Config) -> list[Check]:
    """A line per problem; none when every model is current and takes its settings as
    written (a healthy host's report stays as it was)."""
    checks: list[Check] = []
    today = datetime.now(UTC).date()
    for section, names_model, model, thinking, effort in _places(config):
        if names_model:
            checks.extend(_lifecycle(f"{section}.model {model}", model, today))
        for note in mapping_notes(model, thinking=thinking, effort=effort):
            checks.append(warned(f"{section} thinking", note, "change thinking or effort"))
    return checks


def _lifecycle(what: str, model: str, today: date) -> list[Check]:
    retired = retired_model_message(model, today)
    if retired is not None:
        return [failed(what, retired, "set a current model id")]
    retirement = RETIRED_MODELS.get(model)
    if retirement is None:
        return []
    return [
        warned(
            what,
            f"{model} is deprecated and retires on {retirement.retired_on:%Y-%m-%d}",
            f"move to {retirement.replacement} before then",
        )
    ]
