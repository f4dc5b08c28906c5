"""Commands that print facts about the system: date, uname, id, ps, and the environment
(env and printenv without a command to run).

Tables read from the ``--help`` pages of GNU coreutils 9.1 (date, uname, id) and procps-ng
4.0.2 (ps), Debian 12. They run inside the sandbox, so ``ps`` sees the sandbox's own
processes (its own pid namespace) and ``id`` the sandbox's user. ``env`` and ``printenv``
print the environment every agent process starts with, which is an allow-list the host
writes (``sandbox.environment``: ``PATH``, a private ``HOME`` and ``TMPDIR``, the locale, git's
settings) and holds no secret by construction; ``env`` with a command, an assignment or
``-i``/``-u`` runs or changes something and is refused.
"""

from __future__ import annotations

import re
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, table_rule
from plancord.core.shell.readonly.options import OptionTable, Parsed, parse
from plancord.core.shell.readonly.verdict import Denied, shown

COREUTILS: Final = "GNU coreutils 9.1"
_SETS_CLOCK: Final = "sets the system clock"

DATE: Final = OptionTable(
    source=f"date(1), {COREUTILS}",
    flags="uR",
    values="dfr",
    optional="I",
    long_flags="utc universal rfc-email debug help version",
    long_values="date file reference rfc-3339",
    long_optional="iso-8601",
    known="set",
    reasons={"-s": _SETS_CLOCK, "--set": _SETS_CLOCK},
)
UNAME: Final = OptionTable(
    source=f"uname(1), {COREUTILS}",
    flags="asnrvmpio",
    long_flags="all kernel-name nodename kernel-release kernel-version machine processor "
    "hardware-platform operating-system help version",
)
ID: Final = OptionTable(
    source=f"id(1), {COREUTILS}",
    flags="agGnruzZ",
    long_flags="context group groups name real user zero help version",
)
PS: Final = OptionTable(
    source="ps(1), procps-ng 4.0.2 (UNIX and GNU options)",
    flags="AacdefFHjlLMTwyZ",
    values="CgGoOpqstuU",
    long_flags="forest no-headers headers cumulative help version",
    long_values="format pid ppid sort cols columns width rows lines user User group Group "
    "sid tty quick-pid deselect",
    abbreviations=False,
)
_PS_BSD: Final = re.compile(r"[auxwfjlrTchnSvmHLs]+")
"""BSD-style words (``aux``, ``axjf``): every letter but ``e``, which prints each process's
environment."""


def _check_date(call: Call, parsed: Parsed) -> None:
    """``date`` prints; an operand that does not start with ``+`` sets the clock."""
    if len(parsed.operands) > 1 or any(not o.startswith("+") for o in parsed.operands):
        raise Denied(f"`date {shown(' '.join(parsed.operands))}` {_SETS_CLOCK}")


def _check_ps(call: Call) -> None:
    """Dashed options from the table; other words are BSD-style letters or process ids."""
    for word in parse("ps", call.args, PS).operands:
        if not (word.isdigit() or _PS_BSD.fullmatch(word)):
            raise Denied(
                f"`ps {shown(word)}` is not an option plan mode knows to be read-only"
                + (" (`e` prints each process's environment)" if "e" in word else "")
            )


ENV: Final = OptionTable(
    source="env(1), GNU coreutils 9.1 (printing only: no command, no assignment)",
    flags="0",
    long_flags="null help version",
)
PRINTENV: Final = OptionTable(
    source="printenv(1), GNU coreutils 9.1", flags="0", long_flags="null help version"
)

RULES: Final[dict[str, Rule]] = {
    "env": table_rule(ENV, "none"),
    "printenv": table_rule(PRINTENV, "text"),
    "date": table_rule(
        DATE, "text", path_options=("-f", "--file", "-r", "--reference"), check=_check_date
    ),
    "uname": table_rule(UNAME, "none"),
    "id": table_rule(ID, "text", max_operands=1),
    "ps": _check_ps,
}
