"""Here-strings, here-documents and closed descriptors: read as bash reads them, run as the
input they give.

Each everyday command is judged, and the judged script's output compared with what bash
prints for the original text; each harmful one is shown doing its harm unfiltered, then
refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, harm
from tests.core.shell.readonly.test_substitution import staged

EVERYDAY = [
    "grep -c foo <<< 'foo bar foo'",
    'grep -q TODO <<< "$(git log -1 --format=%B)" || echo none',
    "wc -c <<< $(printf 'a  b\\n\\nc\\n')",
    "cat <<'EOF'\nhello $HOME `ls` \\\\\n  two\nEOF",
    "cat <<EOF\nplain text\nEOF",
    "cat <<-'EOF' | wc -l\n\tone\n\ttwo\n\tEOF",
    "cat <<A && cat <<'B'\na\nA\nb $x\nB\necho after",
    "cat << 'E' # a comment\nx\n\nE",
    "cat <<''\nx\n\n",
    "cat <<'EOF'\nEOF",
    "ls 2>&- notes.txt",
    "ls >&- notes.txt || true",
    "rg --version",
    "command -v rg && rg --version",
]

HARMFUL = [
    ("cat <<EOF\n$(touch PWNED)\nEOF", "writes"),
    ("cat <<EOF\n`touch PWNED`\nEOF", "writes"),
    ("cat <<'EOF' >out\nx\nEOF", "writes"),
    ("bash <<'EOF'\ntouch PWNED\nEOF", "writes"),
    ("sh <<< 'touch PWNED'", "writes"),
    ('grep x <<< "$(touch PWNED)"', "writes"),
    ('cat <<< "$(cat /proc/self/environ)"', "secret"),
    ("cat <<'EOF'\nx\nEOF\ntouch PWNED", "writes"),
]

REFUSED = [
    ("cat <<EOF\n$HOME\nEOF", "quote its delimiter"),
    ("cat <<EOF", "must follow its line"),
    ("cat <<EOF\nx", "not closed"),
    ("cat 3<<<x", "only standard input"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_here_input_runs_as_bash_would(command: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert_runs_as_bash_would(command, verdict, scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_here_input_does_harm_unfiltered_and_is_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_what_is_not_evaluated_says_why(command: str, expected: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason
