"""The only git configuration a sandboxed process sees: an allow-list of keys that run nothing.

Why this exists: a repository's config is written by whoever wrote the repository, and git
runs programs it names (hooks paths, an fsmonitor, pagers, diff and merge drivers, filters,
signing programs, an ssh command, upload/receive-pack, …), and grows new ones. A process
that runs without a human's Allow (``git status`` from a read-only tool) must run none of
them. A deny-list of such keys, or a parser of our own deciding which keys the repository
declares, misses what git obeys (two headers on one line, an include through
``/proc/self/cwd``, a config past a size limit, …). So:

* git itself reads the repository's config (``git config --list --includes --show-scope
  --show-origin -z``, in the sandbox, read-only): :data:`READ_COMMAND`, parsed by
  :func:`parse_listing`, which also keeps the file each entry came from (``config_cache``
  keys its cache on them);
* only the entries whose key is on the allow-list (:func:`is_allowed`: repository format,
  checkout and index keys, ``extensions.*``, remotes' urls and refspecs, branch tracking,
  identity, …) are kept, and :func:`render` writes them as a config file;
* when git's reading holds anything else, that file is what the sandbox shows at the
  repository's config path (bubblewrap binds it over the real one), so git sees nothing
  outside the allow-list; where no mount can hide the real file (the Landlock fallback, the
  sandbox turned off) the run is refused instead, naming the keys;
* system and global config are off (``environment``), and the few settings git honours
  only from its command line are set there (:data:`COMMAND_LINE_SETTINGS`).

A ``.git`` file or a ``commondir`` would send git to a config elsewhere: :func:`locate`
refuses both unless they lead to the git directory plancord made itself for the workspace
(``SandboxPolicy.git_dir``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: How git is asked for its own reading of the repository's config.
READ_COMMAND = (
    "git",
    "config",
    "--list",
    "--includes",
    "--show-scope",
    "--show-origin",
    "-z",
)

#: Settings git honours only from its command line (``GIT_CONFIG_COUNT``), for every run.
#: None names a program a repository chose: bare repositories only when named explicitly,
#: no hooks (hooks are files in the git directory, not config keys), no ``ext::`` transport
#: (a remote url is allow-listed, and that transport runs a command), paths printed as is;
#: and nothing outside the repository's tree decides what a diff shows or a checkout writes:
#: no attributes file of the user's, no sparse checkout (a checkout writes every path).
COMMAND_LINE_SETTINGS: tuple[tuple[str, str], ...] = (
    ("safe.bareRepository", "explicit"),
    ("core.hooksPath", "/dev/null"),
    ("protocol.ext.allow", "never"),
    ("core.quotePath", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.sparseCheckout", "false"),
)

#: Keys without a subsection that run nothing, as git prints them (lower case).
ALLOWED_KEYS = frozenset(
    {
        "core.repositoryformatversion",
        "core.bare",
        "core.filemode",
        "core.symlinks",
        "core.ignorecase",
        "core.precomposeunicode",
        "core.logallrefupdates",
        "core.autocrlf",
        "core.eol",
        "core.safecrlf",
        "core.checkstat",
        "core.trustctime",
        "core.abbrev",
        "core.compression",
        "core.loosecompression",
        "core.bigfilethreshold",
        "core.sparsecheckout",
        "core.sparsecheckoutcone",
        "core.commentchar",
        "core.whitespace",
        "core.warnambiguousrefs",
        "core.untrackedcache",
        "core.splitindex",
        "core.preloadindex",
        "core.protecthfs",
        "core.protectntfs",
        "core.checkroundtripencoding",
        "core.multipackindex",
        "core.commitgraph",
        "index.version",
        "index.skiphash",
        "user.name",
        "user.email",
        "user.useconfigonly",
        "author.name",
        "author.email",
        "committer.name",
        "committer.email",
        "init.defaultbranch",
        "i18n.commitencoding",
        "i18n.logoutputencoding",
        "pull.rebase",
        "pull.ff",
        "merge.ff",
        "merge.conflictstyle",
        "fetch.prune",
        "push.default",
        "push.autosetupremote",
        "branch.autosetupmerge",
        "branch.autosetuprebase",
        "status.showuntrackedfiles",
        "diff.renames",
        "diff.algorithm",
    }
)

#: Sections whose every key without a subsection runs nothing.
ALLOWED_SECTIONS = frozenset({"extensions"})

#: Per-name keys that run nothing: ``remote.<name>.url``, ``branch.<name>.merge``, …
ALLOWED_NAMED_KEYS: dict[str, frozenset[str]] = {
    "remote": frozenset(
        {"url", "pushurl", "fetch", "push", "mirror", "tagopt", "prune", "promisor"}
    ),
    "branch": frozenset({"remote", "pushremote", "merge", "rebase", "description"}),
}

#: Scopes of git's reading that belong to the repository (system, global and the command
#: line are off or plancord's own).
_REPOSITORY_SCOPES = frozenset({"local", "worktree"})


class ForeignRepository(Exception):
    """The workspace's git directory or config is not one plancord can vouch for."""


def is_allowed(key: str) -> bool:
    """Whether ``key`` (``section.key`` or ``section.name.key``, as git prints it) is on the
    allow-list of keys that run nothing."""
    section, _, rest = key.partition(".")
    if "." not in rest:
        return key in ALLOWED_KEYS or (section in ALLOWED_SECTIONS and bool(rest))
    name = rest.rpartition(".")[2]
    return name in ALLOWED_NAMED_KEYS.get(section, frozenset())


@dataclass(frozen=True, slots=True)
class Listing:
    """The repository's entries in git's order, and for each the file git read it from
    (``origins[i]`` is the path git printed, relative to where it ran, or None when the
    origin was not a file)."""

    entries: list[tuple[str, str | None]]
    origins: list[str | None]


def parse_listing(raw: bytes) -> Listing:
    """The repository's entries, in git's order, from ``READ_COMMAND``'s output.

    Each record is ``scope NUL origin NUL key [LF value] NUL``; a key without ``LF`` has no
    value (a bare boolean). Raises ValueError on anything else, so a misread never passes.
    """
    fields = raw.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    if len(fields) % 3:
        raise ValueError("git's config listing ends inside a record")
    entries: list[tuple[str, str | None]] = []
    origins: list[str | None] = []
    for scope, origin, record in zip(fields[0::3], fields[1::3], fields[2::3], strict=True):
        key, newline, value = record.decode("utf-8", "surrogateescape").partition("\n")
        if not key or "." not in key:
            raise ValueError(f"git's config listing holds an unreadable key {key!r}")
        if scope.decode("ascii", "replace") in _REPOSITORY_SCOPES:
            entries.append((key, value if newline else None))
            kind, _, path = origin.decode("utf-8", "surrogateescape").partition(":")
            origins.append(path if kind == "file" and path else None)
    return Listing(entries, origins)


def _quoted(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n").replace("\t", "\\t").replace("\b", "\\b") + '"'


def render(entries: Iterable[tuple[str, str | None]]) -> str:
    """A config file holding ``entries`` in order: git reads back exactly these."""
    lines: list[str] = []
    for key, value in entries:
        section, _, rest = key.partition(".")
        middle, _, name = rest.rpartition(".")
        if "\n" in middle or "\0" in key:
            raise ValueError(f"cannot write the config key {key!r}")
        header = f"[{section} {_quoted(middle)}]" if middle else f"[{section}]"
        lines.append(header)
        lines.append(f"\t{name}" if value is None else f"\t{name} = {_quoted(value)}")
    return "\n".join(lines) + "\n" if lines else ""


@dataclass(frozen=True, slots=True)
class Repository:
    """Where git finds a repository's config: ``config`` (in the common directory) and,
    when it exists, the worktree's own ``config.worktree``; ``directory`` is the git
    directory itself."""

    config: Path
    worktree_config: Path | None
    directory: Path


def locate(
    workspace: Path, git_dir: Path | None = None, *, within: Path | None = None
) -> Repository | None:
    """The repository at ``workspace`` (a workspace, or a repository nested in one), or
    None when it has no ``.git``.

    Raises :class:`ForeignRepository` for a ``.git`` symbolic link, a ``.git`` file or a
    ``commondir``, unless it leads to ``git_dir``, the git directory plancord made for this
    workspace. ``within``: for a repository nested in that workspace, a ``.git`` file may
    also lead to a git directory inside it (a submodule's, in ``.git/modules``).
    """
    dot_git = workspace / ".git"
    if dot_git.is_symlink():
        raise ForeignRepository(
            f"{dot_git} is a symbolic link; plancord runs git only on a .git directory "
            "inside the workspace"
        )
    if dot_git.is_file():
        pointer = dot_git.read_text(errors="replace").strip()
        target = Path(pointer.removeprefix("gitdir:").strip())
        resolved = (workspace / target).resolve()
        made = git_dir is not None and resolved == git_dir.resolve()
        nested = within is not None and resolved.is_relative_to(within) and resolved.is_dir()
        if not pointer.startswith("gitdir:") or not (made or nested):
            raise ForeignRepository(
                f"{dot_git} is a file pointing to another git directory "
                f"({pointer[:200]!r}), not a worktree plancord made; plancord runs git only "
                "on git directories inside the workspace"
            )
        directory = resolved
    elif dot_git.is_dir():
        directory = dot_git
    else:
        return None
    common = directory
    commondir = directory / "commondir"
    if commondir.exists():
        if git_dir is None or directory.resolve() != git_dir.resolve():
            raise ForeignRepository(
                f"the git directory {directory} has a commondir file, which sends git to "
                "another repository's config; plancord runs git only on a repository it "
                "can vouch for"
            )
        common = (directory / commondir.read_text(errors="replace").strip()).resolve()
    worktree_config = directory / "config.worktree"
    return Repository(
        config=common / "config",
        worktree_config=worktree_config if worktree_config.exists() else None,
        directory=directory,
    )


@dataclass(frozen=True, slots=True)
class ConfigView:
    """What git's reading held: the allow-listed entries and the keys that were dropped."""

    kept: list[tuple[str, str | None]]
    dropped: list[str]

    @property
    def needed(self) -> bool:
        """Whether the real config holds anything git must not see."""
        return bool(self.dropped)


def filtered(entries: list[tuple[str, str | None]]) -> ConfigView:
    """Split git's reading into the allow-listed entries and the dropped keys."""
    kept = [(key, value) for key, value in entries if is_allowed(key)]
    dropped = sorted({key for key, _ in entries if not is_allowed(key)})
    return ConfigView(kept, dropped)


def config_environment(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``GIT_CONFIG_COUNT`` and its ``KEY_n``/``VALUE_n`` variables for ``pairs``."""
    pairs = list(pairs)
    environment = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    return environment
