"""A command line as one argv, for the rules that remember a shell command by its words.

"Allow always" for ``npm test`` must cover ``npm test`` and ``npm test --watch``, never
``npm testx``, ``npm run evil`` or ``npm test; rm -rf .``. A text prefix cannot tell them
apart; the filter's own reader can. :func:`simple_argv` gives the argv of a line that is
exactly one simple command whose words bash reads as written (no connector, pipe,
redirection, substitution, parameter, glob, assignment or compound command), and None for
anything else, so a rule on words never matches a line that does more than its words say.
"""

from __future__ import annotations

from typing import Final

from plancord.core.shell.readonly.grammar import _ASSIGNMENT, RESERVED_WORDS
from plancord.core.shell.readonly.raw import RawCommand
from plancord.core.shell.readonly.reading import read
from plancord.core.shell.readonly.substitution import NeedsStage
from plancord.core.shell.readonly.verdict import Denied

_GLOB: Final = frozenset("*?[{")


def simple_argv(command: str) -> tuple[str, ...] | None:
    """The argv of ``command`` when it is one plain simple command; None otherwise."""
    try:
        script = read(command)
    except (Denied, NeedsStage):
        return None
    except Exception:
        return None
    if script.constructs or script.uses_pwd or len(script.pipelines) != 1:
        return None
    [pipeline] = script.pipelines
    if not isinstance(pipeline, list) or len(pipeline) != 1:
        return None
    [element] = pipeline
    if not isinstance(element, RawCommand) or element.redirects or not element.words:
        return None
    words: list[str] = []
    for word in element.words:
        if word.separators is not None:
            return None
        if any(c in _GLOB and word.unquoted(i) for i, c in enumerate(word.text)):
            return None
        words.append(word.text)
    if _ASSIGNMENT.match(words[0]) or words[0] in RESERVED_WORDS or words[0] in ("(", ")"):
        return None
    return tuple(words)
