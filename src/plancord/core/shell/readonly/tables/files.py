"""Commands that look at files and directories rather than their text: ls, stat, tree, test…

Tables read from the ``--help`` pages of GNU coreutils 9.1, GNU findutils 4.9.0, tree 2.1.0
and file 5.44 (Debian 12), and from bash 5.2's builtin help for ``test``, ``type``, ``command`` and
``cd``.
"""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, check_free_words, table_rule
from plancord.core.shell.readonly.options import OptionTable, names, parse
from plancord.core.shell.readonly.paths import check_directory, check_path
from plancord.core.shell.readonly.verdict import Denied, shown

COREUTILS: Final = "GNU coreutils 9.1"

LS: Final = OptionTable(
    source=f"ls(1), {COREUTILS}",
    flags="aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1",
    values="ITw",
    long_flags="all almost-all author escape directory dired ignore-backups file-type "
    "group-directories-first no-group human-readable si dereference-command-line "
    "dereference-command-line-symlink-to-dir inode kibibytes dereference literal "
    "numeric-uid-gid hide-control-chars show-control-chars quote-name recursive reverse "
    "size full-time context zero help version",
    long_values="block-size format hide ignore indicator-style quoting-style sort tabsize "
    "time time-style width",
    long_optional="color classify hyperlink",
)
STAT: Final = OptionTable(
    source=f"stat(1), {COREUTILS}",
    flags="Lft",
    values="c",
    long_flags="dereference file-system terse help version",
    long_values="format printf cached",
)
DU: Final = OptionTable(
    source=f"du(1), {COREUTILS}",
    flags="0abcDhHklLmPSsx",
    values="BdtX",
    long_flags="all apparent-size bytes total dereference-args human-readable si "
    "dereference no-dereference null count-links separate-dirs summarize one-file-system "
    "inodes help version",
    long_values="block-size max-depth threshold exclude exclude-from time-style",
    long_optional="time",
    known="files0-from",
    reasons={"--files0-from": "reads file names the filter cannot check"},
)
DF: Final = OptionTable(
    source=f"df(1), {COREUTILS}",
    flags="ahHiklPT",
    values="Btx",
    long_flags="all human-readable si inodes local no-sync portability print-type sync "
    "total help version",
    long_values="block-size type exclude-type",
    long_optional="output",
)
FILE: Final = OptionTable(
    source="file(1), file 5.44",
    flags="bcdEhiklLNnrsvzZ0",
    values="eFmP",
    long_flags="brief checking-printout debug dereference no-dereference keep-going list "
    "mime mime-type mime-encoding no-buffer no-pad raw special-files uncompress "
    "uncompress-noreport print0 extension apple help version",
    long_values="exclude exclude-quiet separator magic-file parameter",
    known="compile preserve-date no-sandbox files-from",
    reasons={
        "-f": "reads file names the filter cannot check",
        "--files-from": "reads file names the filter cannot check",
        "-C": "compiles a magic file and writes it out",
        "--compile": "compiles a magic file and writes it out",
        "-p": "resets the access times of the files it reads",
        "--preserve-date": "resets the access times of the files it reads",
        "-S": "turns off its own sandbox",
        "--no-sandbox": "turns off its own sandbox",
        "-z": "runs decompression programs",
        "--uncompress": "runs decompression programs",
        "-Z": "runs decompression programs",
        "--uncompress-noreport": "runs decompression programs",
    },
)
REALPATH: Final = OptionTable(
    source=f"realpath(1), {COREUTILS}",
    flags="eLmPqsz",
    long_flags="canonicalize-existing canonicalize-missing logical physical quiet strip "
    "no-symlinks zero help version",
    long_values="relative-to relative-base",
)
READLINK: Final = OptionTable(
    source=f"readlink(1), {COREUTILS}",
    flags="efmnqsvz",
    long_flags="canonicalize canonicalize-existing canonicalize-missing no-newline quiet "
    "silent verbose zero help version",
)
NAMES: Final = OptionTable(
    source=f"basename(1) and dirname(1), {COREUTILS}",
    flags="az",
    values="s",
    long_flags="multiple zero help version",
    long_values="suffix",
)
PWD: Final = OptionTable(source="bash 5.2 `help pwd`", flags="LP", permute=False)
WHICH: Final = OptionTable(source="which(1), debianutils 5.7", flags="as", permute=False)
TYPE: Final = OptionTable(source="bash 5.2 `help type`", flags="aftpP", permute=False)
CD: Final = OptionTable(source="bash 5.2 `help cd`", flags="LPe@", permute=False)

# -- tree (tree 2.1.0, tree --help) ------------------------------------------------------

_TREE_FLAGS: Final = "acdfghilnpqrstuvxACDFJQNSUX"
_TREE_VALUES: Final = "LPIHT"
_TREE_LONG_FLAGS: Final = names(
    "gitignore matchdirs metafirst ignore-case nolinks inodes device dirsfirst filesfirst si "
    "du prune noreport fflinks info version help"
)
_TREE_LONG_VALUES: Final = names("sort charset timefmt filelimit")
_TREE_LONG_FILES: Final = names("gitfile infofile hintro houtro")
_TREE_REFUSED: Final = {
    "-o": "writes its output to a file",
    "-R": "writes an HTML file into every directory it lists",
    "--fromfile": "reads the paths to list from files the filter cannot check",
}


def _check_tree(call: Call) -> None:
    """tree parses its own options: in a cluster every letter that takes a value takes the
    *next word*, and the cluster goes on (``tree -Lo 1 out`` writes ``out``); long options
    take ``--name=value`` or ``--name value`` and are never abbreviated."""
    args = call.args
    i = 0
    operands: list[str] = []
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands.extend(args[i:])
            break
        if word.startswith("--"):
            name, has_value, value = word[2:].partition("=")
            if "--" + name in _TREE_REFUSED:
                raise Denied(f"`tree --{name}` {_TREE_REFUSED['--' + name]}")
            if name in _TREE_LONG_FLAGS and not has_value:
                continue
            if name not in _TREE_LONG_VALUES and name not in _TREE_LONG_FILES:
                raise Denied(f"`tree {shown(word)}` is not an option plan mode knows")
            if not has_value:
                if i >= len(args):
                    raise Denied(f"`tree --{name}` needs a value")
                value, i = args[i], i + 1
            if name in _TREE_LONG_FILES:
                check_path(call.place, value)
            continue
        if not word.startswith("-") or word == "-":
            operands.append(word)
            continue
        for letter in word[1:]:
            if "-" + letter in _TREE_REFUSED:
                raise Denied(f"`tree -{letter}` {_TREE_REFUSED['-' + letter]}")
            if letter in _TREE_VALUES:
                if i >= len(args):
                    raise Denied(f"`tree -{letter}` needs a value")
                i += 1
            elif letter not in _TREE_FLAGS:
                raise Denied(f"`tree -{shown(letter)}` is not an option plan mode knows")
    for operand in operands:
        check_path(call.place, operand, what="lists")


# -- test and [ (bash 5.2 builtins) -------------------------------------------------------


def _check_test(call: Call) -> None:
    args = list(call.args)
    if call.program == "[":
        if not args or args[-1] != "]":
            raise Denied("`[` needs a closing `]`")
        args = args[:-1]
    for word in args:
        if word in ("-v", "-R"):
            raise Denied(
                f"`{call.program} {word}` looks up variables and evaluates array subscripts, "
                "which can run code"
            )
    check_free_words(call, args)


def _check_command(call: Call) -> None:
    if not call.args or call.args[0] not in ("-v", "-V"):
        raise Denied(
            "`command` runs another command past the shell's usual lookup; only "
            "`command -v NAME` is allowed"
        )


def check_cd(call: Call) -> str:
    """The directory ``cd`` enters (checked), for the commands after it."""
    parsed = parse("cd", call.args, CD)
    if len(parsed.operands) != 1:
        raise Denied("`cd` takes one directory here (a bare `cd` goes to the home directory)")
    check_directory(call.place, parsed.operands[0])
    return parsed.operands[0]


def _ignore(_: object) -> None:
    return None


RULES: Final[dict[str, Rule]] = {
    "ls": table_rule(LS, lists=True),
    "stat": table_rule(STAT, lists=True),
    "du": table_rule(DU, path_options=("-X", "--exclude-from"), lists=True),
    "df": table_rule(DF),
    "file": table_rule(FILE, path_options=("-m", "--magic-file")),
    "realpath": table_rule(REALPATH, path_options=("--relative-to", "--relative-base")),
    "readlink": table_rule(READLINK),
    "basename": table_rule(NAMES, "text"),
    "dirname": table_rule(NAMES, "text"),
    "pwd": table_rule(PWD, "none"),
    "which": table_rule(WHICH, "text"),
    "type": table_rule(TYPE, "text"),
    "command": _check_command,
    "tree": _check_tree,
    "test": _check_test,
    "[": _check_test,
    "cd": lambda call: _ignore(check_cd(call)),
}
