"""git's option tables, sub-command by sub-command, as the git 2.39 manual pages give them
(git-log(1), git-diff(1), …); ``git.py`` holds the checks that use them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from plancord.core.shell.readonly.options import OptionTable, names

_MANUAL: Final = "git 2.39"
_TEXTCONV: Final = "runs text-conversion programs configured in the repository"
_PROGRAMS: Final = {
    "--output": "writes to a file",
    "--ext-diff": "runs an external diff program",
    "--textconv": _TEXTCONV,
    "--show-signature": "runs gpg to check signatures",
    "--no-index": "compares files outside the repository",
    "--open-files-in-pager": "opens files in a pager or editor",
    "-O": "opens files in a pager or editor",
    "--filters": "runs the repository's filter programs",
}
_DIFF_FLAGS: Final = (
    "patch no-patch raw patch-with-raw patch-with-stat indent-heuristic minimal patience "
    "histogram compact-summary numstat shortstat cumulative summary name-only name-status "
    "renames rename-empty check full-index binary find-copies-harder irreversible-delete "
    "pickaxe-all pickaxe-regex text ignore-cr-at-eol ignore-space-at-eol ignore-space-change "
    "ignore-all-space ignore-blank-lines function-context exit-code quiet no-ext-diff "
    "no-textconv no-prefix default-prefix ita-invisible-in-index ita-visible-in-index "
    "follow cached staged merge-base base ours theirs"
)
_DIFF_VALUES: Final = (
    "anchored diff-algorithm word-diff-regex diff-filter find-object skip-to rotate-to "
    "src-prefix dst-prefix line-prefix inter-hunk-context output-indicator-new "
    "output-indicator-old output-indicator-context stat-width stat-name-width "
    "stat-graph-width stat-count ws-error-highlight ignore-matching-lines"
)
_DIFF_OPTIONAL: Final = (
    "unified stat dirstat dirstat-by-file color color-moved color-moved-ws word-diff "
    "color-words submodule abbrev find-renames find-copies break-rewrites relative "
    "ignore-submodules"
)
_LOG_FLAGS: Final = (
    "all reflog alternate-refs single-worktree ignore-missing merges no-merges first-parent "
    "exclude-first-parent-only not cherry-mark cherry-pick left-only right-only cherry "
    "walk-reflogs merge boundary simplify-by-decoration show-pulls full-history dense sparse "
    "simplify-merges date-order author-date-order topo-order reverse do-walk oneline "
    "abbrev-commit relative-date parents children left-right graph source use-mailmap "
    "mailmap full-diff log-size all-match invert-grep regexp-ignore-case basic-regexp "
    "extended-regexp fixed-strings perl-regexp remove-empty cc dd combined-all-paths "
    "remerge-diff standard-notes clear-decorations count objects objects-edge object-names "
    "timestamp header"
)
_LOG_VALUES: Final = (
    "max-count skip since after until before author committer grep grep-reflog min-parents "
    "max-parents glob exclude format encoding date decorate-refs decorate-refs-exclude "
    "diff-merges since-as-filter max-age min-age"
)
_LOG_OPTIONAL: Final = (
    "branches tags remotes ancestry-path no-walk pretty show-linear-break decorate "
    "expand-tabs notes show-notes"
)
_REFUSED_LONG: Final = (
    "output ext-diff textconv show-signature no-index open-files-in-pager filters"
)


def _table(
    page: str,
    flags: str = "",
    values: str = "",
    optional: str = "",
    long_flags: str = "",
    long_values: str = "",
    long_optional: str = "",
    reasons: Mapping[str, str] | None = None,
    *,
    numeric: bool = False,
) -> OptionTable:
    return OptionTable(
        source=f"{page}, {_MANUAL}",
        flags=flags,
        values=values,
        optional=optional,
        long_flags=long_flags,
        long_values=long_values,
        long_optional=long_optional,
        known=_REFUSED_LONG,
        reasons={**_PROGRAMS, **(reasons or {})},
        abbreviations=False,
        negatable=True,
        numeric=numeric,
    )


LOG: Final = _table(
    "git-log(1), git-show(1), git-diff(1), git-rev-list(1)",
    flags="puszRabwWDiEFPmcg",
    values="SGIlnL",
    optional="UMCBX",
    long_flags=f"{_DIFF_FLAGS} {_LOG_FLAGS}",
    long_values=f"{_DIFF_VALUES} {_LOG_VALUES}",
    long_optional=f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}",
    numeric=True,
)
SHORTLOG: Final = _table(
    "git-shortlog(1)",
    flags="nsec",
    optional="w",
    long_flags=f"{_LOG_FLAGS} numbered summary email",
    long_values=_LOG_VALUES.replace(" committer", "") + " group",
    long_optional=_LOG_OPTIONAL,
    numeric=True,
)
BLAME: Final = _table(
    "git-blame(1)",
    flags="bltsefnpcw",
    values="LS",
    optional="MC",
    long_flags="root show-stats reverse first-parent porcelain line-porcelain incremental "
    "progress score-debug show-name show-number show-email color-lines color-by-age minimal "
    "no-textconv",
    long_values="encoding contents date ignore-rev ignore-revs-file",
    long_optional="abbrev",
)
GREP: Final = _table(
    "git-grep(1)",
    flags="iIwvhHEGPFnlLzocpWqar",
    values="ABCmef",
    long_flags="ignore-case word-regexp invert-match full-name extended-regexp basic-regexp "
    "perl-regexp fixed-strings line-number column files-with-matches name-only "
    "files-without-match null only-matching count break heading show-function "
    "function-context quiet cached untracked index exclude-standard recurse-submodules text "
    "no-textconv recursive and or not all-match",
    long_values="after-context before-context context max-count threads max-depth",
    long_optional="color",
    numeric=True,
)
STATUS: Final = _table(
    "git-status(1)",
    flags="sbvz",
    optional="u",
    long_flags="short branch show-stash long verbose ahead-behind renames null",
    long_optional="porcelain untracked-files ignored ignore-submodules column find-renames",
)
_CHANGES_BRANCHES: Final = "creates, deletes, renames or reconfigures branches"
BRANCH: Final = _table(
    "git-branch(1)",
    flags="arlvi",
    long_flags="all remotes list verbose show-current ignore-case omit-empty no-color no-column",
    long_values="sort format",
    long_optional="abbrev color column contains no-contains merged no-merged points-at",
    reasons=dict.fromkeys(
        names(
            "-d -D -m -M -c -C -f -u -t --delete --move --copy --force --set-upstream-to "
            "--unset-upstream --edit-description --track --create-reflog"
        ),
        _CHANGES_BRANCHES,
    ),
)
TAG: Final = _table(
    "git-tag(1)",
    flags="li",
    optional="n",
    long_flags="list ignore-case omit-empty no-color no-column",
    long_values="sort format",
    long_optional="color column contains no-contains merged no-merged points-at",
    reasons=dict.fromkeys(
        names(
            "-a -s -u -f -d -v -m -F -e --annotate --sign --local-user --force --delete --verify "
            "--message --file --edit --cleanup --create-reflog"
        ),
        "creates, deletes, signs or verifies tags",
    ),
)
REV_PARSE: Final = _table(
    "git-rev-parse(1)",
    flags="q",
    long_flags="show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir "
    "is-inside-work-tree is-inside-git-dir is-bare-repository is-shallow-repository verify "
    "quiet symbolic symbolic-full-name all revs-only no-revs flags sq not local-env-vars "
    "shared-index-path show-superproject-working-tree end-of-options",
    long_values="since after until before default path-format disambiguate exclude",
    long_optional="abbrev-ref short branches tags remotes show-object-format glob",
)
LS_FILES: Final = _table(
    "git-ls-files(1)",
    flags="cdoisukmztvf",
    values="x",
    long_flags="cached deleted others ignored stage unmerged killed modified directory "
    "empty-directory eol deduplicate full-name recurse-submodules error-unmatch debug "
    "sparse exclude-standard resolve-undo",
    long_values="exclude with-tree format",
    long_optional="abbrev",
)
LS_TREE: Final = _table(
    "git-ls-tree(1)",
    flags="drtlz",
    long_flags="long name-only name-status object-only full-name full-tree",
    long_values="format",
    long_optional="abbrev",
)
CAT_FILE: Final = _table(
    "git-cat-file(1)",
    flags="tsepZ",
    long_flags="batch-all-objects buffer unordered follow-symlinks allow-unknown-type "
    "mailmap use-mailmap",
    long_optional="batch batch-check",
)
DESCRIBE: Final = _table(
    "git-describe(1)",
    long_flags="all tags contains exact-match debug long always first-parent",
    long_values="candidates match exclude",
    long_optional="abbrev dirty broken",
)
CONFIG: Final = _table(
    "git-config(1)",
    flags="lz",
    long_flags="local worktree show-origin show-scope null name-only includes no-includes "
    "bool int bool-or-int path expiry-date get get-all get-regexp get-urlmatch list",
    long_values="type default",
    reasons={
        "--file": "reads a configuration file outside the repository's own",
        "--global": "reads the user's configuration, outside the workspace",
        "--system": "reads the system's configuration",
    },
)
MERGE_BASE: Final = _table(
    "git-merge-base(1)", flags="a", long_flags="all octopus independent is-ancestor fork-point"
)
FOR_EACH_REF: Final = _table(
    "git-for-each-ref(1)",
    flags="sp",
    long_flags="shell perl python tcl ignore-case omit-empty",
    long_values="count sort format exclude",
    long_optional="color contains no-contains merged no-merged points-at",
)
SHOW_REF: Final = _table(
    "git-show-ref(1)",
    flags="dsq",
    long_flags="head dereference tags heads branches verify quiet",
    long_optional="hash abbrev",
)
COUNT_OBJECTS: Final = _table(
    "git-count-objects(1)", flags="vH", long_flags="verbose human-readable"
)
NAME_REV: Final = _table(
    "git-name-rev(1)", long_flags="name-only tags all undefined always", long_values="refs exclude"
)
CHECK_IGNORE: Final = _table(
    "git-check-ignore(1)", flags="qvnz", long_flags="quiet verbose non-matching index"
)
WORKTREE_LIST: Final = _table("git-worktree(1)", flags="vz", long_flags="porcelain verbose")
REMOTE: Final = _table("git-remote(1)", flags="v", long_flags="verbose")

GLOBAL: Final = OptionTable(
    source="git(1), git 2.39",
    flags="P",
    values="C",
    long_flags="no-pager no-replace-objects literal-pathspecs glob-pathspecs noglob-pathspecs "
    "icase-pathspecs no-optional-locks version help",
    known="git-dir work-tree namespace exec-path config-env super-prefix paginate bare "
    "html-path man-path info-path list-cmds attr-source",
    reasons={
        "-c": "changes configuration, which can make git run programs",
        "--config-env": "changes configuration, which can make git run programs",
        "--exec-path": "changes where git finds the programs it runs",
        "--git-dir": "points git at another repository",
        "--work-tree": "points git at another work tree",
        "--namespace": "changes which refs git uses",
        "-p": "runs a pager",
        "--paginate": "runs a pager",
        "--bare": "treats the directory as a bare repository",
    },
    abbreviations=False,
    permute=False,
)
FSCK: Final = _table(
    "git-fsck(1)",
    flags="v",
    long_flags="tags root unreachable cache reflogs full connectivity-only strict verbose "
    "name-objects progress dangling",
    reasons={"--lost-found": "writes the objects it finds into .git/lost-found"},
)
FORMAT_PATCH: Final = _table(
    "git-format-patch(1) (with --stdout only)",
    flags="kpnN",
    values="v",
    long_flags=f"{_DIFF_FLAGS} stdout numbered no-numbered keep-subject signoff no-signature "
    "rfc cover-letter no-binary zero-commit root progress ignore-if-in-upstream",
    long_values=f"{_DIFF_VALUES} subject-prefix reroll-count start-number base "
    "in-reply-to to cc signature suffix creation-factor",
    long_optional=f"{_DIFF_OPTIONAL} from thread",
    reasons={"-o": "writes the patches to files", "--output-directory": "writes files"},
    numeric=True,
)
ARCHIVE: Final = _table(
    "git-archive(1) (to standard output)",
    flags="vl",
    long_flags="list verbose worktree-attributes",
    long_values="format prefix add-file",
    reasons={
        "-o": "writes the archive to a file",
        "--remote": "uses the network",
        "--exec": "runs a program on the remote side",
        "--add-virtual-file": "adds content the filter does not check",
    },
    numeric=True,
)
