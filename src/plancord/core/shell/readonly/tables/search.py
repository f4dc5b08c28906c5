"""Searching: grep, ripgrep, and xargs feeding file names to a searcher.

grep's table was read from GNU grep 3.8's ``--help`` (getopt_long: abbreviations resolve);
ripgrep's from ripgrep 13.0.0's ``--help`` (clap: no abbreviations, so none are accepted);
xargs's from GNU findutils 4.9.0's xargs(1).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, table_rule
from plancord.core.shell.readonly.options import OptionTable, Parsed, names, parse
from plancord.core.shell.readonly.tables.text import HEAD, TAIL
from plancord.core.shell.readonly.verdict import Denied, shown

GREP: Final = OptionTable(
    source="grep(1), GNU grep 3.8",
    flags="EFGPiyvwxcLloqsbHhnTZUzrR",
    values="efmABC",
    long_flags="extended-regexp fixed-strings basic-regexp perl-regexp ignore-case "
    "no-ignore-case word-regexp line-regexp null-data no-messages invert-match version help "
    "byte-offset line-number line-buffered with-filename no-filename only-matching quiet "
    "silent text files-without-match files-with-matches count initial-tab null recursive "
    "dereference-recursive no-group-separator binary",
    long_values="regexp file max-count label binary-files directories exclude include "
    "exclude-dir exclude-from after-context before-context context group-separator",
    long_optional="color colour",
    known="devices",
    reasons={
        "-D": "can read devices and named pipes, which may never end",
        "--devices": "can read devices and named pipes, which may never end",
    },
    numeric=True,
    dash_values="-e --regexp",
)
_NO_PATTERN_GREP: Final = ("-e", "--regexp", "-f", "--file", "-V", "--version", "--help")

_RG_RUNS_PROGRAMS: Final = "runs other programs on the files it searches"
RG: Final = OptionTable(
    source="rg(1), ripgrep 13.0.0",
    flags="abcFHhIiLlNnopqSsUuvwx0.",
    values="ABCdEefgjMmrTt",
    long_flags="text binary no-binary byte-offset count count-matches column no-column crlf "
    "no-crlf debug trace files files-with-matches files-without-match fixed-strings "
    "no-fixed-strings follow no-follow heading no-heading hidden no-hidden ignore-case "
    "include-zero invert-match json no-json line-buffered no-line-buffered block-buffered "
    "no-block-buffered line-number no-line-number line-regexp multiline no-multiline "
    "multiline-dotall no-multiline-dotall mmap no-mmap no-config no-ignore no-ignore-dot "
    "no-ignore-exclude no-ignore-files no-ignore-global no-ignore-parent no-ignore-vcs "
    "no-ignore-messages ignore-messages no-messages messages no-require-git require-git "
    "no-unicode unicode null null-data one-file-system no-one-file-system only-matching "
    "passthru pcre2 no-pcre2 pcre2-version pretty quiet smart-case case-sensitive stats "
    "no-stats trim no-trim type-list unrestricted vimgrep with-filename no-filename "
    "word-regexp max-columns-preview no-max-columns-preview glob-case-insensitive "
    "no-glob-case-insensitive auto-hybrid-regex no-auto-hybrid-regex no-search-zip "
    "no-pre ignore-file-case-insensitive no-ignore-file-case-insensitive no-context-separator "
    "no-encoding no-pcre2-unicode pcre2-unicode ignore ignore-dot ignore-exclude "
    "ignore-files ignore-global ignore-parent ignore-vcs help version",
    long_values="after-context before-context context color colors context-separator "
    "dfa-size-limit encoding engine field-context-separator field-match-separator file "
    "glob iglob ignore-file max-columns max-count max-depth max-filesize path-separator "
    "regexp regex-size-limit replace sort sortr threads type type-not type-add type-clear",
    known="pre pre-glob search-zip",
    reasons={
        "-z": _RG_RUNS_PROGRAMS,
        "--search-zip": _RG_RUNS_PROGRAMS,
        "--pre": _RG_RUNS_PROGRAMS,
        "--pre-glob": _RG_RUNS_PROGRAMS,
    },
    abbreviations=False,
    dash_values="-e --regexp",
)
_NO_PATTERN_RG: Final = (*_NO_PATTERN_GREP, "--files", "--type-list", "--pcre2-version")

XARGS: Final = OptionTable(
    source="xargs(1), GNU findutils 4.9.0",
    flags="0rt",
    values="adnLPs",
    long_flags="null no-run-if-empty verbose help version",
    long_values="arg-file delimiter max-args max-lines max-procs max-chars",
    known="eof replace interactive open-tty process-slot-var exit",
    reasons={
        "-I": "builds commands from input text the filter cannot see",
        "-i": "builds commands from input text the filter cannot see",
        "--replace": "builds commands from input text the filter cannot see",
        "-p": "asks on the terminal",
        "-o": "gives the command the terminal",
    },
    permute=False,
)
XARGS_SAFE: Final = names(
    "cat head wc grep egrep fgrep ls stat basename dirname nl tac rev md5sum sha1sum "
    "sha256sum sha512sum"
)
"""Commands xargs may run: any word xargs adds from its input (even one that reads as an
option) can only make them read or print, never write or run a program."""


_FEEDING: Final = (
    "xargs makes file names of its input, which the filter cannot see; only the paths a "
    "search prints (find, git ls-files, grep -l, rg -l or --files, through head, tail, sort, "
    "uniq or grep) may feed it"
)
_FIND_PRINTS_TEXT: Final = names("-printf -ls -fls -fprint -fprint0 -fprintf -exec")
_PATH_LISTS: Final = names("-l -L --files-with-matches --files-without-match --files")


def _prints_paths(argv: tuple[str, ...], call: Call) -> bool:
    """Whether ``argv`` prints only paths the filter has checked, one per line."""
    program, args = argv[0], list(argv[1:])
    if program == "find":
        end = next(
            (i for i, a in enumerate(args) if a.startswith("-") or a in ("(", "!", ",")),
            len(args),
        )
        inside = all(call.place.inside(call.place.resolve(start)) for start in args[:end])
        return inside and not any(a in _FIND_PRINTS_TEXT for a in args)
    if program == "git":
        return args[:1] == ["ls-files"] and not any(a.startswith("--format") for a in args)
    table = {"rg": RG, "grep": GREP, "egrep": GREP, "fgrep": GREP}.get(program)
    if table is None:
        return False
    parsed = _parsed(program, args, table)
    if parsed is None or not parsed.has(*_PATH_LISTS):
        return False
    return program != "rg" or not parsed.has("-r", "--replace")


def _keeps_lines(argv: tuple[str, ...]) -> bool:
    """Whether ``argv`` passes whole lines of its input on (it picks, orders, counts)."""
    program, args = argv[0], list(argv[1:])
    if program in ("sort", "uniq"):
        return True
    if program == "tail" and any(re.fullmatch(r"[+-][0-9]*[bc]f?", a) for a in args):
        return False  # an obsolete form counting bytes
    table = {"head": HEAD, "tail": TAIL, "grep": GREP, "egrep": GREP, "fgrep": GREP}.get(program)
    parsed = None if table is None else _parsed(program, args, table)
    if parsed is None:
        return False
    return not parsed.has("-c", "--bytes", "-o", "--only-matching", "-b", "--byte-offset")


def _parsed(program: str, args: list[str], table: OptionTable) -> Parsed | None:
    try:
        return parse(program, args, table)
    except Denied:
        return None


def _check_feeders(call: Call) -> None:
    if not call.feeders:
        raise Denied(f"`xargs` reads words from input the filter cannot see; {_FEEDING}")
    producer, *filters = call.feeders
    if not _prints_paths(producer, call) or not all(_keeps_lines(f) for f in filters):
        raise Denied(f"`{shown(' '.join(producer[:2]))} | … xargs`: {_FEEDING}")


def _check_xargs(call: Call, rules: Mapping[str, Rule]) -> None:
    parsed = parse(call.program, call.args, XARGS)
    if parsed.has("-a", "--arg-file"):
        raise Denied(
            "`xargs -a FILE` makes file names of a file's text, which the filter cannot see"
        )
    if not parsed.operands:
        raise Denied("`xargs` without a command runs `echo`; name the command")
    program, *args = parsed.operands
    if program not in XARGS_SAFE:
        raise Denied(
            f"`xargs {program}`: xargs adds words from its input, which could turn into "
            f"options of `{program}`; only simple readers (grep, cat, wc, ls…) may follow xargs"
        )
    _check_feeders(call)
    rules[program](Call(program, args, call.place))


def _grep_check(call: Call, parsed: Parsed) -> None:
    for value in parsed.values("-d", "--directories"):
        if value not in ("read", "skip", "recurse"):
            raise Denied(f"`grep --directories={value}` is not a mode grep knows")


RULES: Final[dict[str, Rule]] = {
    **dict.fromkeys(
        ("grep", "egrep", "fgrep"),
        table_rule(
            GREP,
            "pattern",
            path_options=("-f", "--file", "--exclude-from"),
            given_by=_NO_PATTERN_GREP,
            check=_grep_check,
        ),
    ),
    "rg": table_rule(
        RG, "pattern", path_options=("-f", "--file", "--ignore-file"), given_by=_NO_PATTERN_RG
    ),
}


def xargs_rule(rules: Mapping[str, Rule]) -> Rule:
    def rule(call: Call) -> None:
        _check_xargs(call, rules)

    return rule
