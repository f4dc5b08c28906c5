"""git's read-only sub-commands, from the git 2.39 manual pages (git-log(1), git-diff(1), …).

git parses with its own parse-options: clustered short options, ``--name=value`` and
``--name value``, optional values only attached (``-U5``, ``--unified=5``; ``-U`` alone takes
none), and ``--no-NAME`` for boolean options. It also accepts unique abbreviations of long
options; the filter does not resolve them and asks for the full name instead, which is
always safe. Options that reach outside the repository (``-C``, ``--git-dir``,
``--no-index``, ``--output``) or run programs (``--ext-diff``, ``--textconv``, ``-c``,
``--show-signature``) are refused by name, and git only runs where the workspace's own
repository is the one git will find (``paths.check_own_repository``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from plancord.core.shell.readonly.commands import Call, Rule, check_free_words
from plancord.core.shell.readonly.options import OptionTable, Parsed, names, parse
from plancord.core.shell.readonly.paths import (
    check_directory,
    check_own_repository,
    check_path,
)
from plancord.core.shell.readonly.tables.git_options import (
    ARCHIVE,
    BLAME,
    BRANCH,
    CAT_FILE,
    CHECK_IGNORE,
    CONFIG,
    COUNT_OBJECTS,
    DESCRIBE,
    FOR_EACH_REF,
    FORMAT_PATCH,
    FSCK,
    GLOBAL,
    GREP,
    LOG,
    LS_FILES,
    LS_TREE,
    MERGE_BASE,
    NAME_REV,
    REMOTE,
    REV_PARSE,
    SHORTLOG,
    SHOW_REF,
    STATUS,
    TAG,
    WORKTREE_LIST,
)
from plancord.core.shell.readonly.verdict import Denied, shown


def _formats(call: Call, parsed: Parsed) -> None:
    for value in parsed.values("--format", "--pretty"):
        if "%G" in value:
            raise Denied("`%G` format placeholders run gpg to check signatures")


def _listing(call: Call, parsed: Parsed) -> None:
    """``git branch`` and ``git tag`` list when given ``--list`` or a filter (``--contains``,
    ``--merged``, ``--points-at``…; for tags ``-n`` too), and then their operands are
    patterns; otherwise an operand names a branch or tag to create."""
    filters = ("--contains", "--no-contains", "--merged", "--no-merged", "--points-at")
    listing = parsed.has("-l", "--list", *filters) or (
        call.program == "git tag" and parsed.has("-n")
    )
    if parsed.operands and not listing:
        raise Denied(f"`{call.program} NAME` creates one; only listing forms are allowed")


_CONFIG_GETS: Final = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l")


def _config(call: Call, parsed: Parsed) -> None:
    """Only the forms that read: ``--get``, ``--get-all``, ``--get-regexp``,
    ``--get-urlmatch``, ``--list``, and ``git config KEY`` (one operand and no action is
    git's get)."""
    actions = [o for o, _ in parsed.options if o in _CONFIG_GETS]
    if len(actions) > 1:
        raise Denied("`git config` is given more than one action")
    action = actions[0] if actions else "--get"
    allowed = 0 if action in ("--list", "-l") else 2
    if not actions:
        allowed = 1  # `git config KEY` gets; `git config KEY VALUE` sets
    if len(parsed.operands) > allowed or (action == "--get" and not parsed.operands):
        raise Denied(
            "`git config` is allowed only to read (`git config KEY`, `--get`, `--get-all`, "
            "`--get-regexp`, `--list`); these operands would change configuration"
        )


def _to_stdout(call: Call, parsed: Parsed) -> None:
    """``git format-patch`` writes a file per patch unless ``--stdout`` prints them."""
    if not parsed.has("--stdout"):
        raise Denied("`git format-patch` writes files; `git format-patch --stdout` prints")


def _remote(call: Call, parsed: Parsed) -> None:
    if parsed.operands:
        raise Denied(
            "only `git remote` and `git remote -v` are allowed; others change remotes or use "
            "the network"
        )


_Check = Callable[[Call, Parsed], None]
_BLAME_FILES: Final = ("--contents", "--ignore-revs-file", "-S")
_PATH_VALUES: Final = {
    "blame": _BLAME_FILES,
    "annotate": _BLAME_FILES,
    "grep": ("-f",),
    "archive": ("--add-file",),
}
"""Option values each sub-command opens as files (``git grep -f FILE`` reads patterns)."""
_SUBCOMMANDS: Final[dict[str, tuple[OptionTable, _Check | None]]] = {
    "log": (LOG, _formats),
    "show": (LOG, _formats),
    "diff": (LOG, _formats),
    "whatchanged": (LOG, _formats),
    "rev-list": (LOG, _formats),
    "shortlog": (SHORTLOG, _formats),
    "blame": (BLAME, None),
    "annotate": (BLAME, None),
    "grep": (GREP, None),
    "status": (STATUS, None),
    "branch": (BRANCH, _listing),
    "tag": (TAG, _listing),
    "rev-parse": (REV_PARSE, None),
    "ls-files": (LS_FILES, None),
    "ls-tree": (LS_TREE, None),
    "cat-file": (CAT_FILE, None),
    "describe": (DESCRIBE, None),
    "config": (CONFIG, _config),
    "merge-base": (MERGE_BASE, None),
    "for-each-ref": (FOR_EACH_REF, None),
    "show-ref": (SHOW_REF, None),
    "count-objects": (COUNT_OBJECTS, None),
    "name-rev": (NAME_REV, None),
    "check-ignore": (CHECK_IGNORE, None),
    "remote": (REMOTE, _remote),
    "fsck": (FSCK, None),
    "format-patch": (FORMAT_PATCH, _to_stdout),
    "archive": (ARCHIVE, None),
}
_NESTED: Final = {
    ("stash", "list"): (LOG, _formats),
    ("stash", "show"): (LOG, _formats),
    ("reflog", "show"): (LOG, _formats),
    ("worktree", "list"): (WORKTREE_LIST, None),
}
_CHANGES: Final = (
    "add am apply checkout switch restore commit merge rebase reset revert cherry-pick rm mv "
    "clean init gc prune repack notes update-ref update-index write-tree commit-tree "
    "symbolic-ref replace sparse-checkout maintenance read-tree mktree mktag hash-object "
    "stage pack-refs"
)
_NETWORK: Final = "fetch pull push clone ls-remote send-email request-pull svn p4 lfs"
_WHY: Final = {
    **dict.fromkeys(_CHANGES.split(), "changes the repository or the work tree"),
    **dict.fromkeys(_NETWORK.split(), "uses the network or writes files"),
    **dict.fromkeys(
        names(
            "difftool mergetool instaweb web--browse help bisect filter-branch submodule daemon "
            "credential var"
        ),
        "runs other programs or reads secrets",
    ),
}


def _check_git(call: Call) -> None:
    parsed = parse("git", call.args, GLOBAL)
    if not parsed.operands:
        if parsed.has("--version", "--help"):
            return
        raise Denied("`git` needs a sub-command")
    place = call.place
    for directory in parsed.values("-C"):  # each `-C` is relative to the one before
        if directory:
            place = place.moved_to(check_directory(place, directory))
    check_own_repository(place)
    call = Call(call.program, call.args, place)
    subcommand, *args = parsed.operands
    label = f"git {subcommand}"
    entry = _SUBCOMMANDS.get(subcommand)
    if entry is None and args and (subcommand, args[0]) in _NESTED:
        label, entry, args = f"{label} {args[0]}", _NESTED[(subcommand, args[0])], args[1:]
    elif entry is None and subcommand == "reflog" and (not args or args[0].startswith("-")):
        entry = (LOG, _formats)
    elif entry is None and subcommand == "stash" and not args:
        raise Denied("`git stash` saves and resets changes; `git stash list` only lists them")
    if entry is None:
        why = _WHY.get(subcommand, "is not a git command plan mode knows to be read-only")
        raise Denied(f"`{shown(label)}` {why}")
    table, check = entry
    sub = Call(label, args, call.place)
    result = parse(label, args, table)
    for value in result.values(*_PATH_VALUES.get(subcommand, ())):
        check_path(call.place, value)
    check_free_words(sub, result.operands)
    if check is not None:
        check(sub, result)


RULES: Final[dict[str, Rule]] = {"git": _check_git}
