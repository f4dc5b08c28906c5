"""The shell parameters whose value the filter knows: ``$PWD`` (and ``~+``), ``$OLDPWD``,
``$PATH``, and ``$HOME`` as a value only shown.

``$PWD`` is the directory the command line starts in: bash, started without ``PWD`` in its
environment (the sandbox sets none), takes it from ``getcwd()``, which is the workspace's
real path, and the filter reads the same. ``${PWD}``, ``${PWD##*/}``, ``${PWD#*/}``,
``${PWD%/*}`` and ``${PWD%%/*}`` are evaluated here; unquoted, the value is split and globbed
as bash would (``expansion.fields``); ``~+`` gives it whole. A ``cd`` on the same line would
change it, so ``classify`` refuses the two together.

``$OLDPWD`` and ``$PATH`` are the host's construction: a command runs as ``bash -c`` in the
environment ``sandbox.environment`` writes, which holds no ``OLDPWD`` (bash then keeps it
unset until a ``cd``, so it is empty; a ``cd`` on the line is refused with it as with
``$PWD``) and ``PATH`` as ``SANDBOX_PATH``. Their values are given as written, unquoted ones
split and globbed (neither holds white space or a glob character).

``$HOME`` is the sandbox's private home, whose path depends on the layer that runs the
command (``/tmp`` under bubblewrap, a fresh ``plancord-sandbox-…`` folder of the host's
temporary directory otherwise), so the filter cannot know it. It stays a reference
(``HOME_VALUE``) that only ``echo``, ``printf``, ``basename`` and ``dirname`` may show; the
rendered script writes ``"$HOME"`` there. Unquoted it is the same one field, and so taken,
when every value it can have holds no white space and no glob character
(``home_is_one_field``): otherwise bash would split or glob it into words the filter cannot
see, and it is refused. A glob in a word holding it is refused either way (bash would match
it in the home, whose entries the filter does not look at).

Every other ``$`` that starts an expansion is refused with the construct named
(``refuse_dollar``).
"""

from __future__ import annotations

import re
import tempfile
from typing import Final

from plancord.core.sandbox_policy import SANDBOX_PATH, SANDBOX_TMP
from plancord.core.shell.readonly.verdict import Denied, shown

HOME_VALUE: Final = "\x02"
"""Stands in a word for a quoted ``$HOME``; input never holds it (control characters are
refused). ``structure.quote`` renders it as ``"$HOME"``."""

SHOWS_HOME: Final = frozenset({"echo", "printf", "basename", "dirname"})
"""Commands that only print their words, so a ``$HOME`` they are given is only shown."""

_EXPANSION_AFTER_DOLLAR: Final = frozenset(
    "{([_@*#?-$!0123456789'\"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)
_EXPANSION_IN_DOUBLE_QUOTES: Final = _EXPANSION_AFTER_DOLLAR - frozenset("'\"")
_FORMS: Final = re.compile(
    r"\$(?:(?P<plain>PWD|HOME|OLDPWD|PATH)(?![A-Za-z0-9_])"
    r"|\{(?P<braced>PWD|HOME|OLDPWD|PATH)(?P<op>##\*/|#\*/|%/\*|%%/\*)?\})"
)
KNOWN_VALUES: Final = {"OLDPWD": "", "PATH": SANDBOX_PATH}
"""The parameters whose value is the host's constant, by name."""

_ONE_FIELD: Final = re.compile(r"/[A-Za-z0-9_./+,:@%=-]*")
"""A path bash neither splits (no IFS white space) nor globs (no ``*``, ``?``, ``[``)."""


def parameter_at(text: str, at: int) -> tuple[str, str, int] | None:
    """The parameter use starting at ``text[at]`` (a ``$``): its name, the operation on its
    value (``""`` for none) and the index after it; None when it is none of the forms."""
    match = _FORMS.match(text, at)
    if match is None:
        return None
    name = match.group("plain") or match.group("braced")
    return name, match.group("op") or "", match.end()


def pwd_value(pwd: str, operation: str) -> str:
    """``${PWD<operation>}``: the shortest or longest prefix through a ``/``, or suffix from
    one, removed, as bash's pattern removal does with these four patterns."""
    if operation == "##*/":
        return pwd[pwd.rfind("/") + 1 :]
    if operation == "#*/":
        return pwd[pwd.find("/") + 1 :] if "/" in pwd else pwd
    if operation == "%/*":
        return pwd[: pwd.rfind("/")] if "/" in pwd else pwd
    if operation == "%%/*":
        return pwd[: pwd.find("/")] if "/" in pwd else pwd
    return pwd


def home_is_one_field() -> bool:
    """Whether every home a sandbox layer gives (``SANDBOX_TMP``, or a folder ``mkdtemp``
    names in the host's temporary directory with letters, digits and ``_``) is one field
    bash neither splits nor globs."""
    return all(_ONE_FIELD.fullmatch(home) for home in (SANDBOX_TMP, tempfile.gettempdir()))


def home_reference(operation: str, *, quoted: bool) -> str:
    """The text a use of ``$HOME`` leaves in the word, or the refusal saying why not."""
    if operation:
        raise Denied("`${HOME…}` with an operation is not evaluated; plan mode shows only `$HOME`")
    if not quoted and not home_is_one_field():
        raise Denied(
            "an unquoted `$HOME` would be split or globbed by bash here (the host's temporary "
            'folder holds white space or a glob character); write "$HOME"'
        )
    return HOME_VALUE


def known_value(name: str, operation: str) -> str:
    """``$OLDPWD`` or ``$PATH``: the value the host's environment gives it."""
    if operation:
        raise Denied(f"`${{{name}…}}` with an operation is not evaluated")
    return KNOWN_VALUES[name]


def check_home_glob(text: str) -> None:
    """Refuse a glob in a word holding ``$HOME``: bash matches it in the home."""
    if HOME_VALUE in text:
        raise Denied(
            "a glob joined to `$HOME` would be matched in the sandbox's home, whose entries "
            "plan mode does not look at"
        )


def check_home_shown(argv: list[str]) -> None:
    """Refuse ``$HOME`` given to a command that would do more than print it."""
    if argv[0] not in SHOWS_HOME and any(HOME_VALUE in word for word in argv):
        raise Denied(
            "`$HOME` is the sandbox's private home, whose path plan mode does not know; only "
            "echo, printf, basename and dirname may show it"
        )


def refuse_dollar(text: str, at: int, *, quoted: bool) -> None:
    """Refuse a ``$`` that starts an expansion; a ``$`` that bash keeps literal passes."""
    following = text[at + 1 : at + 2]
    allowed = _EXPANSION_IN_DOUBLE_QUOTES if quoted else _EXPANSION_AFTER_DOLLAR
    if not following or following not in allowed:
        return
    if following == "(":
        raise Denied("command substitution (`$(…)`) runs a command plan mode cannot see")
    if following == "[":
        raise Denied("arithmetic expansion (`$[…]`) is not read-only shell")
    if following == "{":
        raise Denied(
            f"parameter expansion (`{shown(_span(text, at), 20)}`) has a value plan mode "
            "cannot know"
        )
    if following == "'":
        raise Denied("`$'…'` quoting is not read-only shell plan mode can check")
    if following == '"':
        raise Denied('`$"…"` quoting is not read-only shell plan mode can check')
    raise Denied(
        f"the variable `{shown(_span(text, at), 20)}` has a value plan mode cannot know "
        "(bash would expand and split it)"
    )


def _span(text: str, at: int) -> str:
    match = re.match(r"\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*|.)", text[at:])
    return match.group() if match else "$"
