"""``read`` into several names (``while IFS=: read -r a b rest``): each line is split as
bash's ``read`` splits it, and the loop unrolled with those values.

``read_fields`` is checked against bash itself on a few hundred generated lines, separators
and name counts (one bash run prints what ``read`` assigned for all of them); whole loops
are run as judged and as written and must print the same; harmful variants (a value used
as the command, a value naming a secret, a write in the body) do harm unfiltered and are
refused.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from plancord.core.shell.readonly.read_builtin import read_fields
from plancord.core.shell.readonly.structure import quote
from tests.core.shell.readonly.scratch import Listener, assert_runs_as_bash_would, clean_env, harm
from tests.core.shell.readonly.test_substitution import staged

SEPARATORS = [None, "", ":", ": ", ",", " ", "\t", ":,", " :"]


def _cases(count: int) -> list[tuple[str, int, str | None]]:
    chosen = random.Random(39)
    alphabet = "ab :,\t"
    return [
        (
            "".join(chosen.choice(alphabet) for _ in range(chosen.randrange(0, 9))),
            chosen.randrange(1, 5),
            chosen.choice(SEPARATORS),
        )
        for _ in range(count)
    ]


def _bash_reads(cases: list[tuple[str, int, str | None]]) -> list[tuple[str, ...]]:
    """What bash's ``read -r`` assigns in each case, from one bash run."""
    lines = []
    for line, count, ifs in cases:
        names = " ".join(f"v{i}" for i in range(count))
        prefix = "" if ifs is None else f"IFS={quote(ifs)} "
        shown = " ".join(f'"${{v{i}}}"' for i in range(count))
        lines.append(
            f"printf '%s\\n' {quote(line)} | {{ {prefix}read -r {names}; "
            f"printf '%s/' {shown}; echo; }}"
        )
    output = subprocess.run(
        ["bash", "-c", "\n".join(lines)],
        capture_output=True,
        text=True,
        check=True,
        env=clean_env(),
    ).stdout
    return [tuple(row.split("/")[:-1]) for row in output.split("\n")[:-1]]


def test_read_fields_assigns_what_bash_read_assigns() -> None:
    cases = _cases(400)
    expected = _bash_reads(cases)
    assert len(expected) == len(cases)
    for (line, count, ifs), bash in zip(cases, expected, strict=True):
        ours = read_fields(line, count, ifs)
        assert ours == bash, f"{line!r} into {count} names, IFS={ifs!r}"


EVERYDAY = [
    'while IFS=: read -r user rest; do echo "$user"; done < colons.txt',
    'while IFS=: read -r a b rest; do echo "[$a] [$b] [$rest]"; done < colons.txt',
    "git log -3 --format='%h %s' | while read -r hash subject; do echo \"$hash\"; done",
    'git ls-files -s | while read -r mode object stage path; do echo "$path $mode"; done',
    'while read -r first second; do echo "<$second>"; done < notes.txt',
    'wc -l notes.txt data.txt | while read -r count name; do echo "$name=$count"; done',
    'until ! IFS=, read -r x y; do echo "$y"; done < colons.txt',
    'while IFS= read -r a b; do echo "[$a][$b]"; done < colons.txt',
]

HARMFUL = [
    ('while read -r verb file; do "$verb" "$file"; done < commands.txt', "writes"),
    ("while read -r verb file; do $verb $file; done < commands.txt", "writes"),
    ('while IFS=: read -r name path; do cat "$path"; done < places.txt', "secret"),
    ('while read -r a b; do rm "$b"; done < commands.txt', "writes"),
    ('while read -r a b; do echo "$a" > "$b"; done < commands.txt', "writes"),
]

REFUSED = [
    ('while read -r a a; do echo "$a"; done < notes.txt', "distinct names"),
    ('while read -r IFS b; do echo "$b"; done < notes.txt', "distinct names"),
    ('while IFS="$(ls)" read -r a b; do echo "$a"; done < notes.txt', "substitution"),
    ('while read -r a b; do echo "$a"; done < notes.txt; echo "$b"', "`$b`"),
]


def _inputs(repo: Path) -> None:
    (repo / "colons.txt").write_text("root:x:0:0::/root:/bin/bash\n a : b :c\nx,y,z\n:\n")
    (repo / "commands.txt").write_text("rm x\n")
    (repo / "places.txt").write_text("env:/proc/self/environ\n")


@pytest.mark.parametrize("command", EVERYDAY)
def test_read_into_several_names_runs_as_bash_would(command: str, scratch: Path) -> None:
    _inputs(scratch)
    assert_runs_as_bash_would(command, staged(command, scratch), scratch)


@pytest.mark.parametrize(("command", "expected"), HARMFUL)
def test_harmful_reads_into_several_names_do_harm_unfiltered_and_are_refused(
    command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    _inputs(scratch)
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert harm(command, scratch, listener) == expected, f"{command!r} did no {expected}"


@pytest.mark.parametrize(("command", "reason"), REFUSED)
def test_what_read_cannot_name_is_refused(command: str, reason: str, scratch: Path) -> None:
    verdict = staged(command, scratch)
    assert not verdict.allowed, f"{command!r} was allowed: {verdict.script}"
    assert reason in verdict.reason
