"""The environment every sandboxed process starts with: an allow-list, never the bot's own.

Why this exists: the bot's environment holds its tokens. A process an agent causes gets only
what is written here, whatever the bot's environment holds: the system's ``PATH``, a private
``HOME`` and ``TMPDIR``, a UTF-8 locale, no terminal, no pager, git without prompts, without
optional index writes, without system or global config, without an editor, without replace
objects (``git replace`` refs, which would make git show other content under an object's
id), without system attributes, and with the few settings git takes only from its command
line (``git_config``). Which repository config git sees is the runner's business
(``git_config``: an allow-listed view, read by git).

No variable that sends git elsewhere (``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_OBJECT_DIRECTORY``,
``GIT_COMMON_DIR``, …) reaches a process of the agent, even from a caller's additions: only the
host's own git runs (the execution branch's temporary index) may pass one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from plancord.core.sandbox_policy import SANDBOX_PATH
from plancord.sandbox import git_config

FIXED_ENVIRONMENT: Mapping[str, str] = {
    "PATH": SANDBOX_PATH,
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_EDITOR": ":",
    "GIT_SEQUENCE_EDITOR": ":",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "GIT_ATTR_NOSYSTEM": "1",
}

#: Settings a caller's additions can never replace.
_KEPT = (
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_ATTR_NOSYSTEM",
)

#: The ``GIT_*`` variables a caller may add for any process: who a commit is by.
IDENTITY_VARIABLES = frozenset(
    {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}
)


def sandbox_environment(
    workspace: Path,
    home: str,
    extra: Mapping[str, str] | None = None,
    *,
    host_git: bool = False,
) -> dict[str, str]:
    """The whole environment of one run in ``workspace`` with ``home`` as HOME and TMPDIR.

    ``extra`` (the caller's additions, such as a commit identity) is applied before the git
    settings, so it can never replace one of them; its ``GIT_*`` variables other than the
    identity are dropped unless ``host_git`` (the host's own git run).
    """
    environment = dict(FIXED_ENVIRONMENT)
    environment.update(HOME=home, TMPDIR=home)
    for name, value in (extra or {}).items():
        if host_git or not name.startswith("GIT_") or name in IDENTITY_VARIABLES:
            environment[name] = value
    environment.update({name: FIXED_ENVIRONMENT[name] for name in _KEPT})
    environment["GIT_CEILING_DIRECTORIES"] = str(workspace.parent)
    environment.update(git_config.config_environment(git_config.COMMAND_LINE_SETTINGS))
    return environment
