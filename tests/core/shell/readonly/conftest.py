"""Fixtures for the corpus tests: the scratch repository (built once, copied per case) and a
TCP listener that counts connections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.core.shell.readonly.scratch import Listener, build_template, copy_template, listening


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(tmp_path_factory.mktemp("corpus"))


@pytest.fixture
def scratch(template: Path, tmp_path: Path) -> Path:
    return copy_template(template, tmp_path / "repo")


@pytest.fixture
def listener() -> Iterator[Listener]:
    yield from listening()
