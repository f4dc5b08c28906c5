"""Here-documents (``<<DELIM``, ``<<-DELIM``) and here-strings (``<<< word``), read as bash
reads them and run as the input they give.

A here-document's body is the lines after the line its operator is on, up to a line that is
exactly the delimiter (``<<-`` strips leading tabs from both first). With a quoted delimiter
(``<<'EOF'``) bash takes the body literally; with a plain one it would expand ``$``,
backquotes and backslashes in it, so such a body is refused unless it holds none of them.
A body that does not end with its delimiter line is refused (bash would warn and use the
rest of the text). What runs is the body as data: ``structure`` renders it as a quoted
here-string of the body without its last line break, which gives the command the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from plancord.core.shell.readonly.raw import RawRedirect, Word
from plancord.core.shell.readonly.verdict import Denied, shown

HERE_DOCUMENT_OPERATORS = ("<<", "<<-")
HERE_OPERATORS = (*HERE_DOCUMENT_OPERATORS, "<<<")
_EXPANDED_IN_BODY = frozenset("$`\\")


@dataclass(slots=True)
class PendingDocument:
    """A ``<<`` read on the current line, whose body starts after its line break."""

    redirect: RawRedirect
    delimiter: Word
    strip_tabs: bool


def read_bodies(text: str, start: int, pending: list[PendingDocument]) -> int:
    """Read the bodies of ``pending`` (in order) from ``start`` (just after a line break),
    filling each redirect's target; returns the index after the last delimiter line."""
    i = start
    for document in pending:
        delimiter = document.delimiter.text
        literal = any(document.delimiter.quoted)
        lines: list[str] = []
        while True:
            if i >= len(text):
                raise Denied(f"the here-document `{shown(delimiter)}` is not closed by its line")
            end = text.find("\n", i)
            line = text[i:] if end < 0 else text[i:end]
            i = len(text) if end < 0 else end + 1
            if document.strip_tabs:
                line = line.lstrip("\t")
            if line == delimiter:
                break
            if end < 0:
                raise Denied(f"the here-document `{shown(delimiter)}` is not closed by its line")
            lines.append(line + "\n")
        body = "".join(lines)
        if not literal and _EXPANDED_IN_BODY & set(body):
            raise Denied(
                f"the here-document `{shown(delimiter)}` would expand `$`, backquotes or "
                f"backslashes in its body; quote its delimiter (`<<'{shown(delimiter)}'`)"
            )
        document.redirect.target = Word(body, (True,) * len(body), body)
    return i
