"""Redirections judged: standard input from a checked file or from text, output to
``/dev/null`` or the other standard stream, and reading from a descriptor the command line
itself holds.

A descriptor from 3 to 9 may be opened for reading on a file ``paths`` lets the command
read (``cat 3<notes.txt``); ``exec 3<notes.txt`` holds it for the commands after it on the
line. ``<&3`` (``0<&3``, ``4<&3``) then reads from it, ``<&0`` from standard input and
``<&-`` closes. A descriptor the line did not open is refused (the sandbox's process may
have inherited it from its runner, and what it holds is not the filter's to show), as is
every way of writing through one (``>&3``, ``3>file``, ``3<>file``). An ``exec`` that fails
leaves its descriptor unopened, so the script first closes every descriptor the line reads
from (``Descriptors.prelude``): a later ``<&3`` then fails rather than read what the
process inherited.
"""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.expansion import check_braces, is_glob
from plancord.core.shell.readonly.heredoc import HERE_OPERATORS
from plancord.core.shell.readonly.parameters import HOME_VALUE
from plancord.core.shell.readonly.paths import Place, check_path
from plancord.core.shell.readonly.raw import RawRedirect
from plancord.core.shell.readonly.structure import DEV_NULL, Redirect
from plancord.core.shell.readonly.verdict import Denied, shown

READ_DESCRIPTORS: Final = frozenset(range(3, 10))
"""The descriptors a command line may open for reading (bash's own start at 10)."""


class Descriptors:
    """The descriptors one command line holds open for reading (by ``exec``), and those it
    reads from, which its script closes before anything runs."""

    __slots__ = ("held", "read_from")

    def __init__(self) -> None:
        self.held: set[int] = set()
        self.read_from: set[int] = set()

    def hold(self, redirects: list[Redirect]) -> None:
        """``exec`` with ``redirects``: each must open a descriptor for reading, held by the
        rest of the line, or close one (``exec 3<&-``)."""
        for redirect in redirects:
            closes = redirect.op == "<&" and redirect.target == "-"
            if (redirect.op != "<" and not closes) or redirect.fd not in READ_DESCRIPTORS:
                raise Denied(
                    "`exec` may only hold a descriptor from 3 to 9 open for reading "
                    "(`exec 3<FILE`) or close one; it runs no command and redirects nothing else"
                )
            if closes:
                self.held.discard(redirect.fd)
            else:
                self.held.add(redirect.fd)

    def prelude(self) -> str:
        """What the script starts with: every descriptor the line reads from, closed."""
        if not self.read_from:
            return ""
        return "exec " + " ".join(f"{fd}<&-" for fd in sorted(self.read_from)) + "\n"


def judge_redirect(
    raw: RawRedirect, place: Place, descriptors: Descriptors, opened: set[int]
) -> list[Redirect]:
    """The redirections ``raw`` stands for, judged; ``opened``: the descriptors the command
    opened for reading so far (a descriptor opened here is added)."""
    target = raw.target
    if HOME_VALUE in target.text:
        raise Denied("`$HOME` is the sandbox's private home, whose path plan mode does not know")
    if raw.op in HERE_OPERATORS:
        return [_here_input(raw)]
    _check_target(raw)
    text, op, fd = target.text, raw.op, raw.fd
    if op == "<":
        if fd not in (None, 0, *READ_DESCRIPTORS):
            raise Denied("only standard input and descriptors 3 to 9 may be read from a file")
        check_path(place, text)
        opened.add(fd or 0)
        return [Redirect(fd or 0, "<", text)]
    if op == "<&":
        return [_duplicate(0 if fd is None else fd, text, descriptors, opened)]
    if op == ">&" and text == "-" and fd in (None, 1, 2):
        return [Redirect(1 if fd is None else fd, ">&", "-")]  # closes it
    if op == ">&" and text in ("1", "2"):
        fd = 1 if fd is None else fd
        if fd not in (1, 2):
            raise Denied(f"`{fd}>&{text}`: only standard output and error may be redirected")
        return [Redirect(fd, ">&", text)]
    if op == ">&" and (fd is not None or text.isdigit()):
        raise Denied(
            f"`{fd or ''}>&{shown(text)}` writes through a descriptor; plan mode writes only "
            "to standard output and error"
        )
    if text != DEV_NULL:
        raise Denied(
            f"the redirection `{op}{shown(text)}` writes to a file; plan mode only writes "
            "to /dev/null"
        )
    if op in ("&>", "&>>", ">&"):
        return [Redirect(1, ">", DEV_NULL), Redirect(2, ">&", "1")]
    fd = 1 if fd is None else fd
    if fd not in (1, 2):
        raise Denied(f"`{fd}>`: only standard output and error may be redirected")
    return [Redirect(fd, ">", DEV_NULL)]


def _check_target(raw: RawRedirect) -> None:
    target = raw.target
    check_braces(target)
    if target.separators is not None:
        raise Denied(
            f"the redirection target `{shown(target.source)}` holds an unquoted substitution "
            "bash would split; quote it"
        )
    if is_glob(target):
        raise Denied(f"the redirection target `{shown(target.source)}` is a glob")


def _duplicate(fd: int, source: str, descriptors: Descriptors, opened: set[int]) -> Redirect:
    """``fd<&source``: ``fd`` (standard input or 3 to 9) reads from a descriptor the line
    opened for reading, or from standard input; ``<&-`` closes."""
    if fd not in (0, *READ_DESCRIPTORS):
        raise Denied(
            f"`{fd}<&{shown(source)}` puts an input descriptor on an output one; plan mode "
            "duplicates only onto standard input and descriptors 3 to 9"
        )
    if source == "-":
        opened.discard(fd)
        return Redirect(fd, "<&", "-")
    if not source.isdigit() or (number := int(source)) not in (0, *READ_DESCRIPTORS):
        raise Denied(f"`<&{shown(source)}` is not a descriptor plan mode knows")
    if number != 0 and number not in opened and number not in descriptors.held:
        raise Denied(
            f"`<&{number}` reads a descriptor this command line did not open; open it for "
            f"reading first (`{number}<FILE` or `exec {number}<FILE`)"
        )
    if number != 0:
        descriptors.read_from.add(number)
    opened.add(fd)
    return Redirect(fd, "<&", str(number))


def _here_input(raw: RawRedirect) -> Redirect:
    """A here-string or here-document: standard input from text, never expanded again."""
    if raw.fd not in (None, 0):
        raise Denied("only standard input may come from a here-string or here-document")
    text = raw.target.text
    if raw.op == "<<<":
        return Redirect(0, "<<<", text)  # bash neither splits nor globs it
    if not text:
        return Redirect(0, "<", DEV_NULL)
    return Redirect(0, "<<<", text[:-1])  # the body ends with a line break the `<<<` adds
