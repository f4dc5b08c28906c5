"""Programs that run programs: sed scripts, awk programs and jq filters, judged from their parse.

sed's table is GNU sed 4.9's ``--help``; awk's is the part mawk 1.3.4 and gawk 5.2 share
(``-F``, ``-v``: anything else, such as ``-f`` program files or gawk's ``--load``, is
refused); jq's is jq 1.6's ``--help``.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly import awk, jq, sed
from plancord.core.shell.readonly.commands import Call, Rule
from plancord.core.shell.readonly.options import OptionTable, names, parse
from plancord.core.shell.readonly.paths import check_path
from plancord.core.shell.readonly.verdict import Denied, shown

SED: Final = OptionTable(
    source="sed(1), GNU sed 4.9",
    flags="nrEsuz",
    values="el",
    long_flags="quiet silent regexp-extended separate unbuffered null-data posix debug "
    "sandbox follow-symlinks help version",
    long_values="expression line-length",
    known="in-place file",
    reasons={
        "-i": "edits files in place",
        "--in-place": "edits files in place",
        "-f": "runs a script from a file the filter cannot read",
        "--file": "runs a script from a file the filter cannot read",
    },
    dash_values="-e --expression",
)


def _check_sed(call: Call) -> None:
    parsed = parse(call.program, call.args, SED)
    scripts = parsed.values("-e", "--expression")
    files = list(parsed.operands)
    if not scripts:
        if not files:
            raise Denied("`sed` needs a script")
        scripts = [files.pop(0)]
    problem = sed.script_problem("\n".join(scripts))
    if problem is not None:
        raise Denied(problem)
    for path in files:
        check_path(call.place, path)


AWK: Final = OptionTable(
    source="mawk(1) 1.3.4 and gawk(1) 5.2, the options both share",
    values="Fv",
    known="file exec include load pretty-print profile dump-variables source",
    reasons={
        "-f": "runs a program from a file the filter cannot read",
        "-E": "runs a program from a file the filter cannot read",
        "-W": "options can run programs or write files",
    },
    abbreviations=False,
    dash_values="-F",
)
_AWK_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


_AWK_ARGUMENTS: Final = re.compile(r"ARG[VC]\b")


def _check_awk(call: Call) -> None:
    parsed = parse(call.program, call.args, AWK)
    if not parsed.operands:
        raise Denied("`awk` needs a program")
    program, *files = parsed.operands
    assignments = [*parsed.values("-v"), *(f for f in files if _AWK_ASSIGNMENT.match(f))]
    if any(_AWK_ARGUMENTS.match(a) for a in assignments):
        raise Denied(awk.ARGV_WRITE)
    dialects = (call.program,) if call.program in awk.DIALECTS else awk.DIALECTS
    problem = awk.program_problem(program, dialects)
    if problem is not None:
        raise Denied(problem)
    for path in files:
        if not _AWK_ASSIGNMENT.match(path):  # `var=value` operands assign, they open nothing
            check_path(call.place, path)


_JQ_FLAGS: Final = names(
    "-n -r -j -a -c -s -S -C -M -R -e -h -V --null-input --raw-output --join-output "
    "--ascii-output --compact-output --slurp --sort-keys --color-output --monochrome-output "
    "--raw-input --exit-status --tab --seq --stream --unbuffered --help --version"
)
_JQ_REFUSED: Final = {
    "-f": "runs a filter from a file the filter cannot read",
    "--from-file": "runs a filter from a file the filter cannot read",
    "-L": "loads modules from a directory",
}
_JQ_PAIRS: Final = {"--arg": False, "--argjson": False, "--slurpfile": True, "--rawfile": True}


def _check_jq(call: Call) -> None:
    """jq 1.6 parses its own options: ``--arg NAME VALUE`` takes two words, and no
    abbreviations. The filter is judged from jq's own tokens (``jq.filter_problem``)."""
    args = call.args
    filters: list[str] = []
    files: list[str] = []
    positional_arguments = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word in ("--args", "--jsonargs"):
            positional_arguments = True
            continue
        if word in _JQ_PAIRS:
            if i + 1 >= len(args):
                raise Denied(f"`jq {word}` needs a name and a value")
            if _JQ_PAIRS[word]:
                check_path(call.place, args[i + 1])
            i += 2
            continue
        if word == "--indent":
            i += 1
            continue
        if word in _JQ_REFUSED:
            raise Denied(f"`jq {word}` {_JQ_REFUSED[word]}")
        if word.startswith("-") and word != "-":
            if word not in _JQ_FLAGS and not re.fullmatch(r"-[nrjacsSCMReh]+", word):
                raise Denied(f"`jq {shown(word)}` is not an option plan mode knows to be read-only")
            continue
        if not filters:
            filters.append(word)
        elif not positional_arguments:
            files.append(word)
    for text in filters:
        problem = jq.filter_problem(text)
        if problem is not None:
            raise Denied(problem)
    for path in files:
        check_path(call.place, path)


RULES: Final[dict[str, Rule]] = {
    "sed": _check_sed,
    "awk": _check_awk,
    "mawk": _check_awk,
    "gawk": _check_awk,
    "nawk": _check_awk,
    "jq": _check_jq,
}
