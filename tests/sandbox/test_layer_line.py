"""The one line saying which layer agent commands run under: short even when bubblewrap's
problem is long (the whole story is doctor's), and logged by ``run`` as a warning when it is
the Landlock fallback."""

from __future__ import annotations

import pytest

from plancord.sandbox import Layer, LayerChoice, layers


def test_the_fallback_line_names_the_first_reason_only(monkeypatch: pytest.MonkeyPatch) -> None:
    long = "user namespaces are off (kernel.unprivileged_userns_clone=0); " + "x" * 500
    monkeypatch.setattr(layers, "choose_layer", lambda choice: Layer.LANDLOCK)
    monkeypatch.setattr(layers, "bubblewrap_problem", lambda: long)

    line = layers.layer_in_use(LayerChoice.AUTO)

    assert line == (
        "agent sandbox: the Landlock fallback, weaker than bubblewrap (user namespaces are off "
        "(kernel.unprivileged_userns_clone=0)); plancord doctor says what it lacks"
    )


def test_a_long_first_reason_is_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layers, "choose_layer", lambda choice: Layer.LANDLOCK)
    monkeypatch.setattr(layers, "bubblewrap_problem", lambda: "y" * 500)

    line = layers.layer_in_use(LayerChoice.AUTO)

    assert len(line) < 250 and "y" * layers.WHY_CHARS not in line and "…" in line
