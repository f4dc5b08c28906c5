"""The filter's reading agrees with bash's: for generated command texts, the argv the filter
judges (and the script it runs) is exactly the argv bash builds from the original text."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from plancord.core.shell.readonly import classify
from plancord.core.shell.readonly.expansion import GlobBudget, expand
from plancord.core.shell.readonly.reading import read

_PLAIN = "abcXYZ019_-.,:=+@%^#!"
_GLOBS = [
    "*",
    "?",
    "*.txt",
    "[ab]*",
    "[!a]*",
    "d*/*",
    ".*",
    "[[:alpha:]].md",
    "*[",
    "x]*",
    "dir/",
    "d?r/*.txt",
]
_QUOTABLE = st.characters(min_codepoint=32, max_codepoint=126) | st.sampled_from("\té")


@st.composite
def _piece(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["plain", "single", "double", "escape", "glob"]))
    if kind == "plain":
        return draw(st.text(alphabet=_PLAIN, min_size=1, max_size=6))
    if kind == "single":
        return "'" + draw(st.text(_QUOTABLE.filter(lambda c: c != "'"), max_size=8)) + "'"
    if kind == "double":
        inner = draw(
            st.lists(
                st.text(_QUOTABLE.filter(lambda c: c not in '"\\$`'), min_size=1, max_size=3)
                | st.sampled_from(["\\\\", '\\"', "\\$", "\\`", "\\a", "\\n", "$ ", "$/", "$,"]),
                max_size=4,
            )
        )
        text = "".join(inner)
        if text.endswith("$"):
            text += " "
        return '"' + text + '"'
    if kind == "escape":
        return "\\" + draw(_QUOTABLE)
    return draw(st.sampled_from(_GLOBS))


WORD = (
    st.lists(_piece(), min_size=1, max_size=4)
    .map("".join)
    .filter(lambda w: not w.startswith(("~", "#")) and "~" not in w.replace("\\~", ""))
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("agree")
    for name in ("a.txt", "b.txt", "c.md", "x]y", ".hidden", "ab", "B.md"):
        (root / name).write_text("")
    (root / "dir").mkdir()
    (root / "dir" / "inner.txt").write_text("")
    return root


def _bash_argv(script: str, cwd: Path) -> list[bytes]:
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        capture_output=True,
        check=True,
        env={"PATH": os.environ["PATH"], "LC_ALL": "C"},
    )
    return result.stdout.split(b"\0")[:-1]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(words=st.lists(WORD, min_size=1, max_size=5))
def test_the_filter_builds_the_argv_bash_builds(words: list[str], workspace: Path) -> None:
    text = "printf '%s\\0' " + " ".join(words)
    verdict = classify(text, workspace)
    # a quoted or escaped slash before a glob makes an absolute glob, refused on purpose
    assume("outside the workspace" not in verdict.reason)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    expected = _bash_argv(text, workspace)
    [[command]] = read(text).pipelines
    budget = GlobBudget()
    judged = [w for word in command.words[2:] for w in expand(word, workspace, budget)]
    assert [w.encode() for w in judged] == expected
    assert _bash_argv(verdict.script, workspace) == expected


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(
        st.text(_QUOTABLE | st.sampled_from("\n'\\"), max_size=10), min_size=1, max_size=5
    )
)
def test_the_rendered_script_gives_bash_exactly_the_judged_words(words: list[str]) -> None:
    from plancord.core.shell.readonly.structure import Command, Pipeline, Script

    argv = ("printf", "%s\\0", *words)
    script = Script((Pipeline((Command(argv),)),)).render()
    assert _bash_argv(script, Path.cwd()) == [w.encode() for w in words]
