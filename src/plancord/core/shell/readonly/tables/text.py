"""Commands that read text and print it changed: the coreutils family and its neighbours.

Option tables were read from the ``--help`` pages of GNU coreutils 9.1, GNU diffutils 3.8,
util-linux 2.38.1 and GNU binutils 2.40 (Debian 12); ``known`` lists each program's other
long options so that abbreviations resolve as ``getopt_long`` resolves them.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, table_rule
from plancord.core.shell.readonly.options import OptionTable, names, parse
from plancord.core.shell.readonly.paths import check_path
from plancord.core.shell.readonly.verdict import Denied, shown

COREUTILS: Final = "GNU coreutils 9.1"
_NEVER_ENDS: Final = "follows the file and never ends"
_COUNTS: Final = "-n --lines -c --bytes"
MAX_SEQ_NUMBERS: Final = 10_000_000

CAT: Final = OptionTable(
    source=f"cat(1), {COREUTILS}",
    flags="AbeEnstTuv",
    long_flags="show-all number-nonblank show-ends number squeeze-blank show-tabs "
    "show-nonprinting help version",
)
HEAD: Final = OptionTable(
    source=f"head(1), {COREUTILS}",
    flags="qvz",
    values="cn",
    long_flags="quiet silent verbose zero-terminated help version",
    long_values="bytes lines",
    numeric=True,
    dash_values=_COUNTS,
)
TAIL: Final = OptionTable(
    source=f"tail(1), {COREUTILS}",
    flags="qvz",
    values="cn",
    long_flags="quiet silent verbose zero-terminated help version",
    long_values="bytes lines",
    known="follow max-unchanged-stats pid retry sleep-interval",
    reasons={"-f": _NEVER_ENDS, "-F": _NEVER_ENDS, "--follow": _NEVER_ENDS, "--retry": _NEVER_ENDS},
    numeric=True,
    dash_values=_COUNTS,
)
WC: Final = OptionTable(
    source=f"wc(1), {COREUTILS}",
    flags="clmwL",
    long_flags="bytes chars lines words max-line-length help version",
    long_values="total",
    known="files0-from",
    reasons={"--files0-from": "reads file names the filter cannot check"},
)
SORT: Final = OptionTable(
    source=f"sort(1), {COREUTILS}",
    flags="bdfgiMhnRrVcCmsuz",
    values="ktS",
    long_flags="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
    "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse "
    "version-sort merge stable unique zero-terminated debug help version",
    long_values="key field-separator buffer-size batch-size parallel sort random-source",
    long_optional="check",
    known="compress-program files0-from output temporary-directory",
    reasons={
        "-o": "writes its output to a file",
        "--output": "writes its output to a file",
        "-T": "writes temporary files into the directory it is given",
        "--temporary-directory": "writes temporary files into the directory it is given",
        "--compress-program": "runs a program",
        "--files0-from": "reads file names the filter cannot check",
    },
)
UNIQ: Final = OptionTable(
    source=f"uniq(1), {COREUTILS}",
    flags="cdDiuz",
    values="fsw",
    long_flags="count repeated ignore-case unique zero-terminated help version",
    long_values="skip-fields skip-chars check-chars",
    long_optional="all-repeated group",
)
CUT: Final = OptionTable(
    source=f"cut(1), {COREUTILS}",
    flags="nsz",
    values="bcdf",
    long_flags="complement only-delimited zero-terminated help version",
    long_values="bytes characters delimiter fields output-delimiter",
)
TR: Final = OptionTable(
    source=f"tr(1), {COREUTILS}",
    flags="cCdst",
    long_flags="complement delete squeeze-repeats truncate-set1 help version",
)
NL: Final = OptionTable(
    source=f"nl(1), {COREUTILS}",
    flags="p",
    values="bdfhilnsvw",
    long_flags="no-renumber help version",
    long_values="body-numbering section-delimiter footer-numbering header-numbering "
    "line-increment join-blank-lines number-format number-separator starting-line-number "
    "number-width",
)
TAC: Final = OptionTable(
    source=f"tac(1), {COREUTILS}",
    flags="br",
    values="s",
    long_flags="before regex help version",
    long_values="separator",
)
FOLD: Final = OptionTable(
    source=f"fold(1), {COREUTILS}",
    flags="bs",
    values="w",
    long_flags="bytes spaces help version",
    long_values="width",
    numeric=True,
)
FMT: Final = OptionTable(
    source=f"fmt(1), {COREUTILS}",
    flags="cstu",
    values="pwg",
    long_flags="crown-margin split-only tagged-paragraph uniform-spacing help version",
    long_values="prefix width goal",
    numeric=True,
)
PASTE: Final = OptionTable(
    source=f"paste(1), {COREUTILS}",
    flags="sz",
    values="d",
    long_flags="serial zero-terminated help version",
    long_values="delimiters",
)
JOIN: Final = OptionTable(
    source=f"join(1), {COREUTILS}",
    flags="iz",
    values="aejotv12",
    long_flags="ignore-case check-order nocheck-order header zero-terminated help version",
)
COMM: Final = OptionTable(
    source=f"comm(1), {COREUTILS}",
    flags="123z",
    long_flags="check-order nocheck-order total zero-terminated help version",
    long_values="output-delimiter",
)
EXPAND: Final = OptionTable(
    source=f"expand(1) and unexpand(1), {COREUTILS}",
    flags="ia",
    values="t",
    long_flags="initial all first-only help version",
    long_values="tabs",
    numeric=True,
)
OD: Final = OptionTable(
    source=f"od(1), {COREUTILS}",
    flags="bcdfilosxv",
    values="AjNtS",
    optional="w",
    long_flags="output-duplicates traditional help version",
    long_values="address-radix skip-bytes read-bytes format endian",
    long_optional="strings width",
)
CMP: Final = OptionTable(
    source="cmp(1), GNU diffutils 3.8",
    flags="blsv",
    values="in",
    long_flags="print-bytes verbose quiet silent help version",
    long_values="ignore-initial bytes",
)
DIFF: Final = OptionTable(
    source="diff(1), GNU diffutils 3.8",
    flags="abBcdeEfiNnpqrsStTuwyZ",
    values="CUDFIxXSW",
    long_flags="normal brief report-identical-files ed rcs side-by-side left-column "
    "suppress-common-lines show-c-function expand-tabs initial-tab suppress-blank-empty "
    "new-file unidirectional-new-file ignore-case ignore-file-name-case "
    "no-ignore-file-name-case ignore-tab-expansion ignore-trailing-space ignore-space-change "
    "ignore-all-space ignore-blank-lines text strip-trailing-cr recursive no-dereference "
    "minimal speed-large-files help version",
    long_values="ignore-matching-lines show-function-line label width tabsize exclude "
    "exclude-from starting-file horizon-lines ifdef old-line-format new-line-format "
    "unchanged-line-format line-format old-group-format new-group-format "
    "unchanged-group-format changed-group-format from-file to-file palette",
    long_optional="context unified color",
    known="paginate",
    reasons={"-l": "runs `pr` on its output", "--paginate": "runs `pr` on its output"},
)
COLUMN: Final = OptionTable(
    source="column(1), util-linux 2.38.1",
    flags="tenxJLhV",
    values="scoNWHRETOd",
    long_flags="table fillrows keep-empty-lines json table-noheadings table-noextreme help version",
    long_values="separator output-separator output-width table-columns table-name "
    "table-right table-truncate table-hide table-order table-wrap table-columns-limit "
    "tree tree-id tree-parent table-header-repeat",
)
STRINGS: Final = OptionTable(
    source="strings(1), GNU binutils 2.40",
    flags="adfwhv",
    values="ntesTU",
    long_flags="all data print-file-name include-all-whitespace help version",
    long_values="bytes radix encoding output-separator target unicode",
    numeric=True,
)
HEXDUMP: Final = OptionTable(
    source="hexdump(1), util-linux 2.38.1",
    flags="bcCdoxvhV",
    values="nse",
    long_flags="one-byte-octal one-byte-char canonical two-bytes-decimal two-bytes-octal "
    "two-bytes-hex no-squeezing help version",
    long_values="length skip format",
    known="format-file color",
)
SEQ: Final = OptionTable(
    source=f"seq(1), {COREUTILS}",
    flags="w",
    values="fs",
    long_flags="equal-width help version",
    long_values="format separator",
    permute=False,
)
_NUMBER: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _check_seq(call: Call) -> None:
    """``seq`` must end soon: at most ``MAX_SEQ_NUMBERS`` numbers, counted in exact
    arithmetic from the decimal text (a float rounds ``1.0000000000000001e30`` to ``1e30``),
    and a step seq's ``long double`` can add: a step below the precision of the bounds
    leaves ``first + i * step`` unchanged for billions of steps."""
    args = list(call.args)
    # seq reads a leading negative number as an operand, not an option
    split = next((i for i, a in enumerate(args) if _NUMBER.fullmatch(a)), len(args))
    parsed = parse(call.program, args[:split], SEQ)
    numbers = [*parsed.operands, *args[split:]]
    if not 1 <= len(numbers) <= 3 or not all(_NUMBER.fullmatch(n) for n in numbers):
        raise Denied("`seq` takes one to three plain numbers")
    if any(len(n) > 64 or abs(int(n.lower().partition("e")[2] or 0)) > 4000 for n in numbers):
        raise Denied("`seq` bounds this large are refused")
    values = [Fraction(n) for n in numbers]
    first, step, last = Fraction(1), Fraction(1), values[-1]
    if len(values) > 1:
        first = values[0]
    if len(values) == 3:
        step = values[1]
    if step == 0:
        raise Denied("`seq` with a zero step never ends")
    count = max(math.floor((last - first) / step) + 1, 0)
    if count > MAX_SEQ_NUMBERS:
        raise Denied(f"`seq` would print over {MAX_SEQ_NUMBERS:,} numbers")
    largest = max(abs(first), abs(last))
    exact = all(n.isdigit() for n in numbers) and largest < _LONG_DOUBLE_EXACT
    if not exact and abs(step) * _LONG_DOUBLE_EXACT < largest:
        raise Denied(
            "`seq`'s step is below the precision of its bounds, so the count cannot be "
            "trusted to end"
        )


_LONG_DOUBLE_EXACT: Final = 2**52
"""Integers up to here are exact even in a double; a step smaller than the bounds over this
may vanish when added (seq uses ``long double``; the double's precision is the safe side)."""


_XXD_FLAGS: Final = names(
    "-a -autoskip -b -bits -C -capitalize -E -EBCDIC -e -i -include -p -ps -postscript "
    "-plain -u -d -r -revert -h -help -v -version"
)
_XXD_VALUES: Final = names("-c -cols -g -groupsize -l -len -n -name -o -s -seek -R")
_XXD_ATTACHED: Final = re.compile(r"-(?:c|g|l|o|s)[+-]?(?:0[xX][0-9a-fA-F]+|[0-9]+)")


def _check_xxd(call: Call) -> None:
    """xxd (vim 9.0) reads options only until its first operand (``xxd IN -l5`` writes a
    file named ``-l5``), takes ``--name`` for ``-name``, and writes a second operand."""
    args = call.args
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        word = args[i]
        i += 1
        if word == "--":
            break
        option = word[1:] if word.startswith("--") else word
        if option in _XXD_VALUES:
            if i >= len(args):
                raise Denied(f"`xxd {word}` needs a value")
            i += 1
        elif option not in _XXD_FLAGS and not _XXD_ATTACHED.fullmatch(option):
            raise Denied(f"`xxd {shown(word)}` is not an option plan mode knows to be read-only")
    operands = args[i:]
    if len(operands) > 1:
        raise Denied(
            f"`xxd IN OUT` writes to OUT (`{shown(operands[1])}`): xxd stops reading options "
            "at its first file name"
        )
    for operand in operands:
        check_path(call.place, operand)


_TAIL_OBSOLETE: Final = re.compile(r"[+-][0-9]*[bcl]?f?")


def _check_tail(call: Call) -> None:
    """tail's obsolete forms come first, as coreutils parses them: with one option word and
    at most one file, ``+N[bcl][f]`` and ``-N[bcl][f]`` count from the start or the end,
    and a final ``f`` follows the file forever (``tail +1f log``)."""
    args = call.args
    one_file = (
        len(args) == 1
        or (len(args) == 2 and not args[1].startswith("-"))
        or (len(args) == 2 and args[1] == "-")
    )
    first = args[0] if args else ""
    if one_file and _TAIL_OBSOLETE.fullmatch(first) and first not in ("-", "-c"):
        if first.endswith("f"):
            raise Denied(f"`tail {shown(first)}` {_NEVER_ENDS}")
        for path in args[1:]:
            check_path(call.place, path)
        return
    table_rule(TAIL)(call)


def _check_echo(call: Call) -> None:
    """bash's ``echo`` prints its words; it opens nothing."""


def _check_printf(call: Call) -> None:
    if call.args and call.args[0].startswith("-v"):
        raise Denied("`printf -v` assigns a shell variable")
    if call.args and call.args[0].startswith("-") and call.args[0] not in ("-", "--"):
        raise Denied(f"`printf {shown(call.args[0])}` is not an option bash's printf knows")


BASE64: Final = OptionTable(
    source="base64(1) and base32(1), GNU coreutils 9.1",
    flags="di",
    values="w",
    long_flags="decode ignore-garbage help version",
    long_values="wrap",
)
BASENC: Final = OptionTable(
    source="basenc(1), GNU coreutils 9.1",
    flags="di",
    values="w",
    long_flags="decode ignore-garbage base64 base64url base32 base32hex base16 base2msbf "
    "base2lsbf z85 help version",
    long_values="wrap",
)

NUMFMT: Final = OptionTable(
    source="numfmt(1), GNU coreutils 9.1 (numbers from its operands or standard input)",
    flags="z",
    values="d",
    long_flags="debug grouping zero-terminated help version",
    long_values="delimiter field format from from-unit invalid padding round suffix to to-unit",
    long_optional="header",
)

RULES: Final[dict[str, Rule]] = {
    "base64": table_rule(BASE64, max_operands=1),
    "numfmt": table_rule(NUMFMT, "text"),
    "base32": table_rule(BASE64, max_operands=1),
    "basenc": table_rule(BASENC, max_operands=1),
    "cat": table_rule(CAT),
    "head": table_rule(HEAD),
    "tail": _check_tail,
    "wc": table_rule(WC),
    "sort": table_rule(SORT, path_options=("--random-source",)),
    "uniq": table_rule(UNIQ, max_operands=1),
    "cut": table_rule(CUT),
    "tr": table_rule(TR, "text"),
    "nl": table_rule(NL),
    "tac": table_rule(TAC),
    "rev": table_rule(OptionTable(source="rev(1), util-linux 2.38.1", flags="hV")),
    "fold": table_rule(FOLD),
    "fmt": table_rule(FMT),
    "paste": table_rule(PASTE),
    "join": table_rule(JOIN, max_operands=2),
    "comm": table_rule(COMM, max_operands=2),
    "expand": table_rule(EXPAND),
    "unexpand": table_rule(EXPAND),
    "od": table_rule(OD),
    "cmp": table_rule(CMP, max_operands=4),
    "diff": table_rule(DIFF, path_options=("-X", "--exclude-from", "--from-file", "--to-file")),
    "column": table_rule(COLUMN),
    "strings": table_rule(STRINGS),
    "hexdump": table_rule(HEXDUMP),
    "seq": _check_seq,
    "xxd": _check_xxd,
    "echo": _check_echo,
    "printf": _check_printf,
    "true": _check_echo,
    "false": _check_echo,
}
