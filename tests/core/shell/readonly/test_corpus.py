"""The attack corpus: harmful commands by family, each shown doing harm, each refused.

Every case is first run for real with bash in a scratch repository, *without* the filter,
and must do the harm its family names (a file written or deleted, a program run, a
connection opened, a secret printed, a process that does not end). Then the filter must
refuse it. A case that does no harm fails the test, so the corpus cannot rot into
commands that prove nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plancord.core.shell.readonly import classify
from tests.core.shell.readonly.scratch import Listener, harm

# -- the families -------------------------------------------------------------------------
# harm: "writes" (a file created, changed or deleted, or a directory written to),
# "connects" (a TCP connection to {port}), "secret" (SECRET in the output),
# "never-ends" (still running after NEVER_ENDS_SECONDS).

FAMILIES: dict[str, list[tuple[str, str]]] = {
    "a comment bash does not see": [
        ("echo $(true)#${y:-$(touch f)}", "writes"),
        ("echo a#$(touch f)", "writes"),
        ("ls x#`touch f`", "writes"),
        ("cat notes.txt # a comment\ntouch f", "writes"),
        ("echo ok\\#; touch f", "writes"),
        ('echo "#"$(touch f)', "writes"),
    ],
    "field splitting": [
        ("sed s/a/b/ notes.txt$IFS-i", "writes"),
        ("sort notes.txt$IFS-oout", "writes"),
        ("git diff$IFS--output=f", "writes"),
        ("sed s/a/b/ notes.txt ${IFS}-i", "writes"),
        ("x=-i; sed s/a/b/ $x notes.txt", "writes"),
        ("set -- -i; sed s/a/b/ $@ notes.txt", "writes"),
    ],
    "options that take a value, or an optional one": [
        ("git diff -U --output=f HEAD", "writes"),
        ("git log -1 --output=f", "writes"),
        ("sort --out=f notes.txt", "writes"),
        ("sed --in-pl s/a/b/ notes.txt", "writes"),
        ("rg --pre=sh x .", "writes"),
        ("sort -nof notes.txt", "writes"),
        ("git log -1 -p --output f", "writes"),
    ],
    "brace expansion": [
        ("find -D {tree,.,-delete}", "writes"),
        ("sort notes.txt {-o,out}", "writes"),
        ("sed {-i,s/a/b/} notes.txt", "writes"),
        ("git log -1 --{output=f,stat}", "writes"),
        ("find . {-name,x,-delete}", "writes"),
        ("tail {-f,notes.txt}", "never-ends"),
    ],
    "operand order": [
        ("sed s/a/b/ notes.txt -i", "writes"),
        ("sort notes.txt -o out", "writes"),
        ("uniq notes.txt out", "writes"),
        ("xxd notes.txt out", "writes"),
        ("sort notes.txt$IFS-oout", "writes"),
        ("tail notes.txt -f", "never-ends"),
    ],
    "network pseudo-devices": [
        ("cat < /dev/tcp/127.0.0.1/{port}", "connects"),
        ("head -c1 < /dev/tcp/127.0.0.1/{port}", "connects"),
        ("echo hi > /dev/tcp/127.0.0.1/{port}", "connects"),
        ("cat notes.txt >& /dev/tcp/127.0.0.1/{port}", "connects"),
        ("wc -c 0</dev/tcp/localhost/{port}", "connects"),
        ("cat notes.txt < /dev/$(printf tcp)/127.0.0.1/{port} >&0", "connects"),
    ],
    "gawk's network files": [
        ("""gawk 'BEGIN{{getline l < "/inet/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{getline l < "/\\151net/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{print "x" > "/inet/tcp/0/127.0.0.1/{port}"}}'""", "connects"),
        ("""gawk 'BEGIN{{"/inet/tcp/0/127.0.0.1/{port}" |& getline l}}'""", "connects"),
        ("""gawk 'BEGIN{{s="/inet/tcp/0/127.0.0.1/{port}"; printf "" > s}}'""", "connects"),
        ("""awk 'BEGIN{{f="/inet/tcp/0/127.0.0.1/{port}"; getline x < f}}'""", "connects"),
    ],
    "an embedded repository": [
        ("git -C vendor/lib.git diff HEAD~1 HEAD", "writes"),
        ("git --git-dir=vendor/lib.git diff HEAD~1 HEAD", "writes"),
        ("cd vendor/lib.git && git diff HEAD~1 HEAD", "writes"),
        ("git --git-dir vendor/lib.git log -p --ext-diff -1", "writes"),
        ("GIT_DIR=vendor/lib.git git diff HEAD~1 HEAD", "writes"),
        ("cd vendor/lib.git && git show --ext-diff HEAD", "writes"),
    ],
    "temporary files": [
        ("sort -T scratch -S 2K data.txt", "writes"),
        ("sort --temporary-directory=scratch -S 2K data.txt", "writes"),
        ("sort -S 2K -Tscratch data.txt", "writes"),
        ("sort --tem=scratch -S 2K data.txt", "writes"),
        ("sort -S 2K data.txt -T scratch", "writes"),
        ("TMPDIR=scratch sort -S 2K data.txt", "writes"),
    ],
    "secrets": [
        ("strings /proc/$$/environ", "secret"),
        ("cat /proc/self/environ", "secret"),
        ("""awk 'BEGIN{print ENVIRON["CORPUS_TOKEN"]}'""", "secret"),
        ("echo $CORPUS_TOKEN", "secret"),
        ("jq -n env", "secret"),
        ("jq -n '$ENV.CORPUS_TOKEN'", "secret"),
        ("grep -a SECRET /proc/self/environ", "secret"),
    ],
    "never-ending reads": [
        ("seq inf", "never-ends"),
        ("tail -f app.log", "never-ends"),
        ("cat /dev/zero", "never-ends"),
        ("tail -F app.log", "never-ends"),
        ("tail --follow=name app.log", "never-ends"),
        ("wc -c < /dev/zero", "never-ends"),
        ("seq 1e100", "never-ends"),
        ("grep x /dev/zero", "never-ends"),
    ],
}

CASES = [
    pytest.param(family, command, expected, id=f"{family[:12]}-{index}")
    for family, cases in FAMILIES.items()
    for index, (command, expected) in enumerate(cases)
]


@pytest.mark.parametrize(("family", "command", "expected"), CASES)
def test_each_corpus_command_does_harm_unfiltered_and_is_refused(
    family: str, command: str, expected: str, scratch: Path, listener: Listener
) -> None:
    command = command.replace("{port}", str(listener.port)).replace("{{", "{").replace("}}", "}")
    verdict = classify(command, scratch)
    assert harm(command, scratch, listener) == expected, f"{family}: {command!r} did no {expected}"
    assert not verdict.allowed, f"{family}: {command!r} was allowed: {verdict.reason}"
    assert verdict.script is None
    assert verdict.reason


def test_every_family_has_five_variants() -> None:
    assert len(FAMILIES) >= 11
    assert all(len(cases) >= 5 for cases in FAMILIES.values())
