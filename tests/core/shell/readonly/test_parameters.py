"""``$PWD`` (with ``${PWD##*/}`` and the like, and ``~+``) and ``$HOME``, quoted or not: the
words the filter builds are the words bash builds, and what runs prints what bash prints.
(``$PATH`` and ``$OLDPWD`` take their values from the sandbox's environment, so they are
compared with bash inside the sandbox: ``tests/security/test_everyday_families.py``.)

Each everyday command is judged and its script's output compared with bash's output for
the original text in the same environment; each harmful variant is shown doing its harm
unfiltered, then refused.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, harm, run

EVERYDAY = [
    'echo "$HOME"',
    "echo $HOME",
    "printf '[%s]' $HOME ${HOME}",
    "basename $HOME",
    'printf "%s\\n" "home: $HOME"',
    'basename "$HOME"',
    'basename "$PWD"',
    "echo ${PWD##*/}",
    'echo "${PWD#*/}" "${PWD%/*}" "${PWD%%/*}" "${PWD}"',
    "ls ~+/src",
    "ls ~+",
    "echo $PWD",
    'ls "$PWD"/src',
    'wc -l "$PWD/notes.txt"',
    'for f in src/*; do echo "$PWD/$f"; done',
    '[[ -d "$PWD" ]] && echo yes',
]

_UP = "../" * 12
HARMFUL = [
    ('rm -rf "$PWD/x"', "writes"),
    ('sed -i s/a/b/ "$PWD"/notes.txt', "writes"),
    (f"cat ~+/{_UP}proc/self/environ", "secret"),
    (f'cat "$PWD/{_UP}proc/self/environ"', "secret"),
    ('echo "$HOME" > out', "writes"),
    ('cd src && touch "$PWD/../PWNED"', "writes"),
]

REFUSED = [
    ('cat "$HOME/x"', "private home"),
    ("echo $HOME/*", "glob joined to `$HOME`"),
    ('echo "$HOME"*', "glob joined to `$HOME`"),
    ("ls $HOME", "private home"),
    ("[[ $HOME == /tmp ]]", "pattern"),
    ("echo ${PATH%/*}", "operation"),
    ("cd src && echo $OLDPWD", "`cd`"),
    ("echo $PLANCORD_TOKEN", "cannot know"),
    ('cd src && echo "$PWD"', "`cd`"),
    ('echo "${HOME%/*}"', "operation"),
    ("echo ~-", "tilde"),
    ('cat < "$HOME"', "private home"),
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_parameters_give_the_words_bash_builds(command: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    judged = assert_runs_as_bash_would(command, verdict, scratch)
    assert judged.returncode == 0, judged.output


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_uses_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"
    verdict = classify(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"


@pytest.mark.parametrize(("command", "expected"), REFUSED)
def test_what_is_not_known_says_why(command: str, expected: str, scratch: Path) -> None:
    verdict = classify(command, scratch)
    assert not verdict.allowed
    assert expected in verdict.reason


def test_an_unquoted_pwd_is_split_as_bash_splits_it(tmp_path: Path) -> None:
    workspace = tmp_path / "a b"
    (workspace / "src").mkdir(parents=True)
    command = "printf '[%s]' $PWD ~+ ${PWD##*/}"
    verdict = classify(command, workspace)
    assert verdict.allowed, verdict.reason
    assert verdict.script is not None
    assert run(verdict.script, workspace).output == run(command, workspace).output


def test_an_unquoted_home_bash_would_split_is_refused(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside bubblewrap the home is a folder of the host's temporary directory; when that
    directory's path holds white space, bash would split an unquoted ``$HOME``."""
    monkeypatch.setattr(tempfile, "tempdir", "/var/tmp/a b")
    verdict = classify("echo $HOME", scratch)
    assert not verdict.allowed
    assert "split or globbed" in verdict.reason
    assert classify('echo "$HOME"', scratch).allowed
