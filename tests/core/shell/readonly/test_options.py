"""The option parser follows getopt_long's rules, and refuses what its table does not allow."""

from __future__ import annotations

import pytest

from plancord.core.shell.readonly.options import OptionTable, parse
from plancord.core.shell.readonly.tables import RULES
from plancord.core.shell.readonly.tables.text import SORT
from plancord.core.shell.readonly.verdict import Denied

TABLE = OptionTable(
    source="a test table",
    flags="abc",
    values="k",
    optional="U",
    long_flags="alpha beta-one beta-two",
    long_values="key",
    long_optional="unified",
    known="output outline",
    reasons={"--output": "writes to a file"},
)


@pytest.mark.parametrize(
    ("args", "options", "operands"),
    [
        (["-abc"], [("-a", None), ("-b", None), ("-c", None)], []),
        (["-ak2", "x"], [("-a", None), ("-k", "2")], ["x"]),
        (["-k", "2", "x"], [("-k", "2")], ["x"]),
        (["-U5"], [("-U", "5")], []),
        (["-U", "5"], [("-U", None)], ["5"]),
        (["--unified", "5"], [("--unified", None)], ["5"]),
        (["--unified=5"], [("--unified", "5")], []),
        (["--key", "v"], [("--key", "v")], []),
        (["--key=v"], [("--key", "v")], []),
        (["--al"], [("--alpha", None)], []),
        (["x", "-a", "y"], [("-a", None)], ["x", "y"]),
        (["--", "-a"], [], ["-a"]),
        (["-"], [], ["-"]),
    ],
)
def test_getopt_long_rules(
    args: list[str], options: list[tuple[str, str | None]], operands: list[str]
) -> None:
    parsed = parse("t", args, TABLE)
    assert list(parsed.options) == options
    assert list(parsed.operands) == operands


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-z"], "not an option"),
        (["--output=x"], "writes to a file"),
        (["--outp=x"], "writes to a file"),  # an abbreviation resolves to the real option
        (["--out"], "ambiguous"),  # --output or --outline
        (["--beta"], "ambiguous"),
        (["--alpha=1"], "takes no value"),
        (["-k"], "needs a value"),
        (["-k", "--output=x"], "looks like an option"),
        (["--key", "-a"], "looks like an option"),
    ],
)
def test_refusals(args: list[str], reason: str) -> None:
    with pytest.raises(Denied, match=reason):
        parse("t", args, TABLE)


def test_without_abbreviations_a_prefix_asks_for_the_full_name() -> None:
    table = OptionTable(source="t", long_flags="stat", abbreviations=False)
    with pytest.raises(Denied, match="write it in full"):
        parse("t", ["--sta"], table)


def test_sort_resolves_an_abbreviation_as_getopt_does() -> None:
    with pytest.raises(Denied, match="writes its output"):
        parse("sort", ["--out=x"], SORT)
    with pytest.raises(Denied, match="temporary files"):
        parse("sort", ["--tem=."], SORT)
    assert parse("sort", ["--numeric"], SORT).options == (("--numeric-sort", None),)


def test_every_table_cites_its_manual() -> None:
    import gc

    tables = [o for o in gc.get_objects() if isinstance(o, OptionTable)]
    assert len(tables) > 30
    assert all(table.source for table in tables)
    assert {"git", "rg", "grep", "sed", "awk", "find", "sort", "xargs"} <= set(RULES)
