"""The environment every sandboxed process starts with: an allow-list, never the bot's own.

Why this exists: the bot's environment holds its tokens. A process an agent causes gets only
what is written here, whatever the bot's environment holds: the system's ``PATH``, a private
``HOME`` and ``TMPDIR``, a UTF-8 locale, no terminal, no pager, git without prompts, without
optional index writes, without system or global config, without an editor, and with the few
settings git takes only from its command line (``git_config``). Which repository config git
sees is the runner's business (``git_config``: an allow-listed view, read by git).
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
}


def sandbox_environment(
    workspace: Path,
    home: str,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The whole environment of one run in ``workspace`` with ``home`` as HOME and TMPDIR.

    ``extra`` (the caller's additions, such as a commit identity) is applied before the git
    settings, so it can never replace one of them.
    """
    environment = dict(FIXED_ENVIRONMENT)
    environment.update(HOME=home, TMPDIR=home)
    environment["GIT_CEILING_DIRECTORIES"] = str(workspace.parent)
    if extra:
        environment.update(extra)
    environment.update(git_config.config_environment(git_config.COMMAND_LINE_SETTINGS))
    return environment
