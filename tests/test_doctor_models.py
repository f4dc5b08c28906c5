"""``plancord doctor`` on the models the config names: a retired one fails with the sentence
the client would refuse it with, a deprecated one warns with its date, a setting a model takes
differently is said; a current model adds no line."""

from __future__ import annotations

from pathlib import Path

from plancord.config import parse_config_text
from plancord.doctor import Status, diagnose
from plancord.doctor.models import check_models
from tests.test_doctor import TOKENS, write_config


def lines(text: str) -> list[str]:
    return [check.line() for check in check_models(parse_config_text(text))]


def test_a_current_model_with_plain_settings_adds_no_line() -> None:
    assert lines("anthropic:\n  model: claude-sonnet-5-5\n  effort: high\n") == []


def test_a_retired_model_fails_with_its_date_and_replacement() -> None:
    found = lines(
        "anthropic:\n  model: claude-sonnet-5-5\n"
        "agents:\n  old:\n    model: claude-3-7-sonnet-20250219\n"
    )
    assert len(found) == 1
    assert found[0].startswith("FAIL agents.old.model claude-3-7-sonnet-20250219")
    assert (
        "claude-3-7-sonnet-20250219 was retired on February 19, 2026; use claude-sonnet-5-5 "
        "(set anthropic.model or agents.<name>.model)"
    ) in found[0]


def test_a_deprecated_model_warns_with_its_retirement_date() -> None:
    (line,) = lines("anthropic:\n  model: claude-opus-4-5\n")
    assert line.startswith("warn anthropic.model claude-opus-4-5")
    assert "retires on 2027-01-22" in line and "claude-opus-5-5" in line


def test_a_setting_the_model_takes_differently_is_said() -> None:
    assert lines(
        "anthropic:\n  model: claude-opus-5-5\n  thinking: false\n"
        "agents:\n  deep:\n    model: claude-sonnet-5-5\n    effort: max\n"
    ) == [
        "warn anthropic thinking: claude-opus-5-5 always thinks; thinking: false cannot turn "
        "it off — change thinking or effort",
        "warn agents.deep thinking: claude-sonnet-5-5 turns thinking off only at effort low, "
        "medium, high; at 'max' it thinks adaptively — change thinking or effort",
    ]


def test_doctor_reports_a_retired_default_model(tmp_path: Path) -> None:
    config = write_config(tmp_path, "anthropic:\n  model: claude-sonnet-4-20250514\n")
    found = list(diagnose(config, environ=TOKENS, landlock=lambda: 6, euid=1000))
    failing = [c for c in found if c.status is Status.FAIL]
    assert [c.what for c in failing] == ["anthropic.model claude-sonnet-4-20250514"]
