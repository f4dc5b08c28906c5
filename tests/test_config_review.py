"""``plan_mode.review`` in the config file: off by default, on with defaults, layered whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.config import ConfigError, load_config
from plancord.core.settings import PlanModeSettings, ReviewMode, ReviewSettings


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_review_is_off_by_default() -> None:
    assert PlanModeSettings().review is None


@pytest.mark.parametrize("value", ['"off"', "off", "false", "null"])
def test_review_off_in_any_spelling(tmp_path: Path, value: str) -> None:
    config = load_config(write(tmp_path, f"plan_mode:\n  review: {value}\n"))
    assert config.plan_mode.review is None


def test_review_on_takes_the_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "plan_mode:\n  review: on\n"))
    assert config.plan_mode.review == ReviewSettings()
    assert config.plan_mode.review.mode is ReviewMode.ADVISE
    assert config.plan_mode.review.model is None


def test_a_review_section_is_read_and_layered_whole(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            "plan_mode:\n"
            "  review:\n"
            "    model: claude-haiku-4-5\n"
            "    mode: require_acknowledgement\n"
            "    require_review: true\n"
            "    timeout_seconds: 30\n"
            "agents:\n"
            "  quiet:\n"
            "    plan_mode:\n"
            "      review: off\n"
            "  strict:\n"
            "    plan_mode:\n"
            "      review:\n"
            "        review_result: true\n",
        )
    )
    review = config.plan_mode.review
    assert review == ReviewSettings(
        model="claude-haiku-4-5",
        mode=ReviewMode.REQUIRE_ACKNOWLEDGEMENT,
        require_review=True,
        timeout_seconds=30,
    )
    assert config.plan_mode_for("quiet").review is None
    assert config.plan_mode_for("strict").review == ReviewSettings(review_result=True)
    assert config.plan_mode_for("other").review == review


@pytest.mark.parametrize(
    ("section", "problem"),
    [
        ("mode: approve", "mode"),
        ("timeout_seconds: 0", "timeout_seconds"),
        ("timeout_seconds: 5000", "timeout_seconds"),
        ("timeout_seconds: true", "timeout_seconds"),
        ("require_review: maybe", "require_review"),
        ("model: ' '", "model"),
        ("reviewer: x", "reviewer"),
    ],
)
def test_a_bad_review_section_is_a_config_error(tmp_path: Path, section: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_config(write(tmp_path, f"plan_mode:\n  review:\n    {section}\n"))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (
            "plan_mode:\n  require_approval: false\n  review:\n    require_review: true\n",
            "plan_mode:",
        ),
        (
            "plan_mode:\n  review:\n    require_review: true\n"
            "agents:\n  ada:\n    plan_mode:\n      require_approval: false\n",
            "agents.ada:",
        ),
    ],
)
def test_a_required_review_nobody_approves_is_a_config_error(
    tmp_path: Path, text: str, where: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(write(tmp_path, text))
    assert where in str(raised.value) and "require_approval is false" in str(raised.value)
