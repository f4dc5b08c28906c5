"""The read-only shell filter: what plan mode (and a ``standard`` profile without asking) may run.

``classify(command, workspace)`` reads the command once into a structure, judges it, and
returns a ``Verdict`` whose ``script`` (set when allowed) is the structure re-rendered with
every word quoted. That script is what runs, so bash never reads the text differently from
the filter. One module per concept:

* ``reading``: the lexer (bash's rules, a subset); ``grammar``: pipelines and lists;
  ``compound``: ``for``, ``while read`` (into one name or several), other ``while`` and
  ``until`` loops, ``if``, ``( … )``; ``conditional``: ``[[ … ]]``;
  ``arithmetic``: literal ``$((…))`` and ``((…))``; all described by ``raw``
* ``loops``: ``for`` and ``while read`` loops, unrolled; ``read_builtin``: what ``read``
  assigns each name from a line
* ``substitution``: ``$(…)`` and ``<(…)`` judged in stages (the caller runs the inner command)
* ``expansion``: globs expanded in the workspace, braces refused
* ``parameters``: the parameters whose value the host knows; ``redirects``: input from
  files, text and descriptors the line opened, output to ``/dev/null``
* ``options``: option tables parsed as each program parses them
* ``paths``: operands judged by what the read-only sandbox shows where they resolve (the
  workspace and system paths as the host has them; nothing elsewhere); git's own repository
* ``sed``, ``awk``: the programs inside programs, parsed
* ``tables/``: every known command, by family
* ``structure``: the judged structure and its quoted rendering
* ``jq``: jq filters read as jq's lexer reads them
* ``operator_rules``, ``rule_examples``: the operator's own rules, proven by their examples
* ``classify``: the steps together
"""

from plancord.core.shell.readonly.classify import (
    MAX_COMMAND_BYTES,
    MAX_COMMANDS,
    MAX_WORDS,
    classify,
)
from plancord.core.shell.readonly.paths import SYSTEM_READ_PATHS
from plancord.core.shell.readonly.verdict import Verdict

__all__ = [
    "MAX_COMMANDS",
    "MAX_COMMAND_BYTES",
    "MAX_WORDS",
    "SYSTEM_READ_PATHS",
    "Verdict",
    "classify",
]
