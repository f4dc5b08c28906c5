"""Git settings that keep a repository's own config from making git run a program.

Why this exists: a repository's ``.git/config`` is written by whoever wrote the repository,
and git runs programs it names: hooks, an fsmonitor, a pager, an external diff, textconv and
filter drivers, merge drivers, an ssh command, credential helpers, upload/receive-pack for a
remote. Every git that an agent causes runs inside the sandbox, so such a program could not
reach the host anyway; it must not run at all, because it would do what the agent was not
allowed to (a ``git status`` the profile runs without asking could write files).

Settings given through ``GIT_CONFIG_COUNT`` count as command-line config, which beats every
config file and is the only place ``safe.bareRepository`` is honoured from, so a repository
cannot override them. Two kinds:

* fixed keys (:data:`FIXED_OVERRIDES`) for programs whose key has a fixed name;
* ``diff.external``, when the repository sets it, is set to the empty string (an external
  diff then fails instead of running; setting it always would break every diff);
* ``remote.<name>.uploadpack``/``receivepack`` and ``core.gitProxy`` take the *first* of
  several values, so a later setting cannot replace the repository's: when the repository
  sets one, the transport that would run it is switched off instead (``protocol.file.allow``
  or ``protocol.git.allow`` = ``never``), and git fails rather than run the program;
* keys named after a driver or remote the repository declares (``filter.<name>.clean``,
  ``diff.<name>.textconv``, ``remote.<name>.uploadpack``, ...): their names are read from
  the repository's config files (:func:`declared_names`) before each run, and each program
  key is set to the empty string (git then runs no filter and no textconv, and an external
  diff fails instead of running) or to git's own program.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Program-running keys with fixed names, and the value that switches each off.
FIXED_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", ""),
    ("credential.helper", ""),
    ("diff.guitool", ""),
    ("merge.tool", ""),
    ("gpg.program", "gpg"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("protocol.ext.allow", "never"),
    ("core.quotePath", "false"),
)

#: For each section that names a program per subsection: the keys that run one, and the
#: value that neutralises each.
_DRIVER_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("command", ""), ("textconv", "")),
    "merge": (("driver", ""),),
    "remote": (
        ("uploadpack", "git-upload-pack"),
        ("receivepack", "git-receive-pack"),
        ("proxy", ""),
    ),
    "difftool": (("cmd", ""), ("path", "")),
    "mergetool": (("cmd", ""), ("path", "")),
}

_SECTION = re.compile(
    r"""^\s*\[\s*(?P<section>[A-Za-z0-9.-]+)\s*(?:"(?P<sub>(?:[^"\\\n]|\\.)*)")?\s*\]""",
    re.MULTILINE,
)
_KEY = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z0-9-]*)\s*(?:=|$|[;#])")
_INCLUDE = re.compile(r"^\s*path\s*=\s*(?P<path>.+?)\s*$", re.MULTILINE | re.IGNORECASE)
_MAX_CONFIG_BYTES = 1024 * 1024
_MAX_INCLUDES = 20


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            text = handle.read(_MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""
    return text.removeprefix("\ufeff")


def _entries(text: str) -> Iterator[tuple[str, str | None, str | None]]:
    """(section, subsection, key) for every header (key None) and every key line.

    The old ``[section.sub]`` spelling counts, and so does a key on its header's line.
    """
    section: str | None = None
    sub: str | None = None
    for line in text.splitlines():
        header = _SECTION.match(line)
        if header is not None:
            raw, quoted = header["section"], header["sub"]
            if quoted is not None:
                section, sub = raw.lower(), re.sub(r"\\(.)", r"\1", quoted)
            elif "." in raw:
                head, _, rest = raw.partition(".")
                section, sub = head.lower(), rest.lower()
            else:
                section, sub = raw.lower(), None
            yield section, sub, None
            line = line[header.end() :]
        key = _KEY.match(line)
        if key is not None and section is not None:
            yield section, sub, key["key"].lower()


def _config_files(git_dir: Path, workspace: Path) -> Iterator[tuple[Path, str]]:
    """The repository's config, its worktree config and what they include, bounded.

    Only includes inside the workspace are followed: the sandbox sees nothing else, so git
    inside it cannot read any other file either.
    """
    queue = [git_dir / "config", git_dir / "config.worktree"]
    seen: set[Path] = set()
    while queue and len(seen) < _MAX_INCLUDES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        text = _read(path)
        yield path, text
        for match in _INCLUDE.finditer(text):
            target = match["path"].strip().strip('"')
            if target.startswith("~"):
                continue
            included = (path.parent / target).resolve()
            if included.is_relative_to(workspace):
                queue.append(included)


@dataclass(frozen=True, slots=True)
class Declared:
    """What a repository's config declares that the overrides must answer.

    ``names``: driver and remote names, by section. ``external_diff``: it sets
    ``diff.external``. ``blocked_protocols``: transports to switch off because the config
    names a program for them that a later setting cannot replace (``remote.<name>.
    uploadpack`` and ``receivepack`` run locally for a local remote, the first of several
    wins; likewise ``core.gitProxy`` for ``git://``).
    """

    names: dict[str, set[str]] = field(default_factory=dict)
    external_diff: bool = False
    blocked_protocols: frozenset[str] = frozenset()


def declared_names(workspace: Path) -> Declared:
    """What the workspace's repository config declares (:class:`Declared`).

    Reads ``.git/config`` (or the config of the directory a ``.git`` file points to),
    ``config.worktree`` and the files they include. Over-approximates on purpose: every
    header counts, conditional includes are followed whatever their condition.
    """
    git_dir = workspace / ".git"
    if git_dir.is_file():
        pointer = _read(git_dir).strip()
        if pointer.startswith("gitdir:"):
            git_dir = (workspace / pointer.removeprefix("gitdir:").strip()).resolve()
    names: dict[str, set[str]] = {}
    external_diff = False
    blocked: set[str] = set()
    root = workspace.resolve()
    if not git_dir.resolve().is_relative_to(root):
        return Declared()
    for _, text in _config_files(git_dir, root):
        for section, sub, key in _entries(text):
            if sub is not None and section in _DRIVER_KEYS:
                names.setdefault(section, set()).add(sub)
            if (section, sub, key) == ("diff", None, "external"):
                external_diff = True
            elif section == "remote" and key in ("uploadpack", "receivepack"):
                blocked.add("file")
            elif (section, key) == ("core", "gitproxy"):
                blocked.add("git")
    return Declared(names, external_diff, frozenset(blocked))


def overrides(workspace: Path) -> list[tuple[str, str]]:
    """The fixed overrides and one per program key of each name the repository declares."""
    declared = declared_names(workspace)
    result = list(FIXED_OVERRIDES)
    if declared.external_diff:
        result.append(("diff.external", ""))
    result += [(f"protocol.{name}.allow", "never") for name in sorted(declared.blocked_protocols)]
    for section, subs in sorted(declared.names.items()):
        for sub in sorted(subs):
            result += [(f"{section}.{sub}.{key}", value) for key, value in _DRIVER_KEYS[section]]
    return result


def config_environment(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT`` and its ``KEY_n``/``VALUE_n`` variables for ``pairs``."""
    environment = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    return environment
