"""A repository's config never makes git run a program: one case per program-running key
git's manual lists for the installed git (``git help --config``), and the allow-list behind it.

Each case first shows that the key does run its program (plain git on the host writes the
marker), then runs the same git command the way an agent's git runs, through the sandbox,
in a writable workspace (so only the allow-listed config view, not the read-only workspace,
can keep the marker from being written).
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from plancord.core.sandbox_policy import Layer, LayerChoice
from plancord.sandbox import (
    SandboxPolicy,
    SandboxUnavailable,
    choose_layer,
    run_sandboxed,
)
from plancord.sandbox.git_config import (
    ForeignRepository,
    filtered,
    is_allowed,
    locate,
    parse_listing,
    render,
)

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
RUN = "{mark}"
#: For programs git talks a protocol with: write the marker, then fail at once.
STOP = "{stop}"


@dataclass(frozen=True)
class Case:
    config: str
    trigger: str
    setup: str = ""
    attributes: str = ""


SSH_KEY = "key::ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDVjWkMzYk1RT2dxeWVkNXlJbWx0eDdPd3RpZ0VBbQ"
CHANGED = "echo changed >> tracked.txt"
DIVERGED = (
    "git checkout -q -b side && echo side > tracked.txt && git commit -qam side && "
    "git checkout -q main && echo main > tracked.txt && git commit -qam main"
)
#: A commit carrying a PGP signature header, on the branch ``signed``.
SIGNED = (
    "git cat-file commit HEAD | awk '{print} /^committer /{print \"gpgsig -----BEGIN PGP "
    'SIGNATURE-----"; print " x"; print " -----END PGP SIGNATURE-----"}\' | '
    "git hash-object -t commit -w --stdin > .git/signed && "
    "git update-ref refs/heads/signed $(cat .git/signed)"
)
CREDENTIAL = "printf 'protocol=https\\nhost=example.invalid\\n\\n' | git credential fill"
SIGN = "git commit -q --allow-empty -S -m x"
BROWSE = "git web--browse https://example.invalid"

CASES = {
    "core.fsmonitor": Case(f"[core]\n\tfsmonitor = {RUN}\n", "git status"),
    "hooks": Case(
        "",
        "git commit -q --allow-empty -m x",
        setup=f"mkdir -p .git/hooks && printf '#!/bin/sh\\n{RUN}\\n' > .git/hooks/post-commit "
        "&& chmod +x .git/hooks/post-commit",
    ),
    "core.hooksPath": Case(
        "[core]\n\thooksPath = myhooks\n",
        "git commit -q --allow-empty -m x",
        setup=f"mkdir myhooks && printf '#!/bin/sh\\n{RUN}\\n' > myhooks/pre-commit "
        "&& chmod +x myhooks/pre-commit",
    ),
    "core.editor": Case(f"[core]\n\teditor = {RUN}\n", "git commit -q --allow-empty"),
    "core.sshCommand": Case(
        f"[core]\n\tsshCommand = {STOP}\n", "git fetch -q ssh://example.invalid/repo"
    ),
    "core.gitProxy": Case(
        f"[core]\n\tgitProxy = {STOP}\n", "git fetch -q git://example.invalid/repo"
    ),
    "commit.gpgSign": Case(
        f"[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = {RUN}\n",
        "git commit -q --allow-empty -m x",
    ),
    "diff.external": Case(
        f"[diff]\n\texternal = {RUN}\n", "git diff", setup="echo changed >> tracked.txt"
    ),
    "diff.<driver>.command": Case(
        f'[diff "x"]\n\tcommand = {RUN}\n',
        "git diff",
        setup="echo changed >> tracked.txt",
        attributes="* diff=x\n",
    ),
    "diff.<driver>.textconv": Case(
        f'[diff "x"]\n\ttextconv = {RUN}\n',
        "git diff",
        setup="echo changed >> tracked.txt",
        attributes="* diff=x\n",
    ),
    "filter.<driver>.clean": Case(
        f'[filter "x"]\n\tclean = {RUN}\n',
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "filter.<driver>.smudge": Case(
        f'[filter "x"]\n\tsmudge = {RUN}\n',
        "git checkout -- tracked.txt",
        setup="rm tracked.txt",
        attributes="* filter=x\n",
    ),
    "filter.<driver>.process": Case(
        f'[filter "x"]\n\tprocess = {RUN}\n',
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "old-style [filter.x] section": Case(
        f"[filter.x]\n\tclean = {RUN}\n",
        "git add tracked.txt",
        setup="echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "merge.<driver>.driver": Case(
        f'[merge "x"]\n\tdriver = {RUN}\n',
        "git merge -q side",
        setup="git checkout -q -b side && echo side > tracked.txt && git commit -qam side && "
        "git checkout -q main && echo main > tracked.txt && git commit -qam main",
        attributes="* merge=x\n",
    ),
    "remote.<name>.uploadpack": Case(
        f'[remote "up"]\n\turl = ./copy.git\n\tuploadpack = {STOP}\n',
        "git fetch -q up",
        setup="git clone -q --bare . copy.git",
    ),
    "remote.<name>.receivepack": Case(
        f'[remote "up"]\n\turl = ./copy.git\n\treceivepack = {STOP}\n',
        "git push -q up main:other",
        setup="git clone -q --bare . copy.git",
    ),
    "an included file": Case(
        "[include]\n\tpath = ../extra.config\n",
        "git add tracked.txt",
        setup=f"printf '[filter \"x\"]\\n\\tclean = {RUN}\\n' > extra.config "
        "&& echo changed >> tracked.txt",
        attributes="* filter=x\n",
    ),
    "a bare repository inside the workspace": Case(
        "",
        "cd evil && git diff --no-index a b",
        setup=f"mkdir -p evil/objects evil/refs/heads && echo 'ref: refs/heads/main' > evil/HEAD "
        f"&& printf '[core]\\n\\tbare = true\\n[diff]\\n\\texternal = {RUN}\\n' > evil/config "
        "&& echo a > evil/a && echo b > evil/b",
    ),
    "core.pager": Case(f"[core]\n\tpager = {STOP}\n", "script -qec 'git log -1' /dev/null"),
    "pager.<cmd>": Case(f"[pager]\n\tlog = {STOP}\n", "script -qec 'git log -1' /dev/null"),
    "sequence.editor": Case(f"[sequence]\n\teditor = {STOP}\n", "git rebase -q -i HEAD"),
    "core.askPass": Case(f"[core]\n\taskPass = {STOP}\n", CREDENTIAL),
    "credential.helper": Case(f"[credential]\n\thelper = !{STOP}\n", CREDENTIAL),
    "credential.<url>.helper": Case(
        f'[credential "https://example.invalid"]\n\thelper = !{STOP}\n', CREDENTIAL
    ),
    "core.alternateRefsCommand": Case(
        f"[core]\n\talternateRefsCommand = {STOP}\n",
        "git rev-list --alternate-refs --all",
        setup="git clone -q --bare . alt.git && echo $PWD/alt.git/objects > "
        ".git/objects/info/alternates",
    ),
    "diff.tool": Case(
        f'[diff]\n\ttool = x\n[difftool "x"]\n\tcmd = {STOP}\n',
        "timeout 5 git difftool -y",
        CHANGED,
    ),
    "difftool.<tool>.path": Case(
        f'[diff]\n\ttool = vimdiff\n[difftool "vimdiff"]\n\tpath = {STOP}\n',
        "timeout 5 git difftool -y",
        CHANGED,
    ),
    "diff.guitool": Case(
        f'[diff]\n\tguitool = x\n[difftool "x"]\n\tcmd = {STOP}\n',
        "timeout 5 git difftool -g -y",
        CHANGED,
    ),
    "merge.tool": Case(
        f'[merge]\n\ttool = x\n[mergetool "x"]\n\tcmd = {STOP}\n',
        "timeout 5 git mergetool --no-prompt",
        setup=f"{DIVERGED} && (git merge -q side || true)",
    ),
    "mergetool.<tool>.path": Case(
        f'[merge]\n\ttool = vimdiff\n[mergetool "vimdiff"]\n\tpath = {STOP}\n',
        "timeout 5 git mergetool --no-prompt",
        setup=f"{DIVERGED} && (git merge -q side || true)",
    ),
    "merge.guitool": Case(
        f'[merge]\n\tguitool = x\n[mergetool "x"]\n\tcmd = {STOP}\n',
        "timeout 5 git mergetool -g --no-prompt",
        setup=f"{DIVERGED} && (git merge -q side || true)",
    ),
    "gpg.program": Case(f"[gpg]\n\tprogram = {STOP}\n", SIGN),
    "gpg.openpgp.program": Case(f'[gpg "openpgp"]\n\tprogram = {STOP}\n', SIGN),
    "gpg.x509.program": Case(f'[gpg]\n\tformat = x509\n[gpg "x509"]\n\tprogram = {STOP}\n', SIGN),
    "gpg.ssh.program": Case(
        f'[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tprogram = {STOP}\n'
        f"[user]\n\tsigningKey = {SSH_KEY}\n",
        SIGN,
    ),
    "gpg.ssh.defaultKeyCommand": Case(
        f'[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tdefaultKeyCommand = {STOP}\n', SIGN
    ),
    "gpg.program verifying (git log --show-signature)": Case(
        f"[gpg]\n\tprogram = {STOP}\n", "git log -1 --show-signature signed", SIGNED
    ),
    "log.showSignature": Case(
        f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {STOP}\n", "git log -1 signed", SIGNED
    ),
    "pretty.<name> as %G?": Case(
        f"[pretty]\n\tsig = %G?\n[gpg]\n\tprogram = {STOP}\n",
        "git log -1 --pretty=sig signed",
        SIGNED,
    ),
    "interactive.diffFilter": Case(
        f"[interactive]\n\tdiffFilter = {STOP}\n",
        "printf 'q\\n' | git -c add.interactive.useBuiltin=false -c color.ui=always add -p",
        CHANGED,
    ),
    "alias.<name>": Case(f"[alias]\n\tx = !{STOP}\n", "git x"),
    "web.browser": Case(f'[web]\n\tbrowser = x\n[browser "x"]\n\tcmd = {STOP}\n', BROWSE),
    "browser.<tool>.path": Case(
        f'[web]\n\tbrowser = firefox\n[browser "firefox"]\n\tpath = {STOP}\n', BROWSE
    ),
    "help.browser": Case(
        f'[help]\n\tbrowser = x\n[browser "x"]\n\tcmd = {STOP}\n',
        "git web--browse --config=help.browser https://example.invalid",
    ),
    "instaweb.browser": Case(
        f'[instaweb]\n\tbrowser = x\n[browser "x"]\n\tcmd = {STOP}\n',
        "git web--browse --config=instaweb.browser https://example.invalid",
    ),
    "man.viewer": Case(f'[man]\n\tviewer = x\n[man "x"]\n\tcmd = {STOP}\n', "git help -m config"),
    "man.<tool>.path": Case(
        f'[man]\n\tviewer = konqueror\n[man "konqueror"]\n\tpath = {STOP}\n',
        "DISPLAY=:0 git help -m config",
    ),
    "includeIf.<condition>.path": Case(
        '[includeIf "gitdir:**"]\n\tpath = ../extra.config\n',
        "git status",
        setup=f"printf '[core]\\n\\tfsmonitor = {STOP}\\n' > extra.config",
    ),
}


def host_git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        **IDENTITY,
    }


def make_repository(root: Path, case: Case) -> Path:
    workspace = root / "ws"
    workspace.mkdir()
    env = host_git_env(root)
    mark = workspace / "mark.sh"
    mark.write_text(f"#!/bin/sh\ntouch {workspace}/MARKER\nexec cat\n")
    mark.chmod(0o755)
    stop = workspace / "stop.sh"
    stop.write_text(f"#!/bin/sh\ntouch {workspace}/MARKER\nexit 1\n")
    stop.chmod(0o755)
    setup = case.setup.replace("{mark}", str(mark)).replace("{stop}", str(stop))
    script = "git init -q -b main && echo one > tracked.txt && git add . && git commit -qm one" + (
        f" && {setup}" if setup else ""
    )
    subprocess.run(["bash", "-c", script], cwd=workspace, env=env, check=True)
    if case.attributes:
        (workspace / ".gitattributes").write_text(case.attributes)
    with (workspace / ".git" / "config").open("a") as config:
        config.write(case.config.replace("{mark}", str(mark)).replace("{stop}", str(stop)))
    return workspace


#: Keys ``git help --config`` lists that name no program, or a program of a tool this
#: machine does not have (so no case can show it running), with why.
NOT_RUN_HERE = {
    "advice.waitingForEditor": "a hint, not a program",
    "color.pager": "a colour switch",
    "column.clean": "a layout",
    "completion.commands": "a list of git subcommands",
    "diff.<driver>.cachetextconv": "caching of textconv, which has its own case",
    "gitcvs.dbDriver": "a DBI driver name",
    "http.proxy": "a URL",
    "remote.<name>.proxy": "a URL",
    "notes.rewrite.<command>": "a switch",
    "rebase.abbreviateCommands": "a switch",
    "guitool.<name>.cmd": "git gui is not installed",
    "sendemail.ccCmd": "git send-email is not installed",
    "sendemail.tocmd": "git send-email is not installed",
    "include.path": "case 'an included file'",
    "gpg.<format>.program": "cases gpg.openpgp.program, gpg.x509.program, gpg.ssh.program",
    "browser.<tool>.cmd": "case 'web.browser'",
    "man.<tool>.cmd": "case 'man.viewer'",
    "difftool.<tool>.cmd": "case 'diff.tool'",
    "mergetool.<tool>.cmd": "case 'merge.tool'",
}
_PROGRAMISH = re.compile(
    r"program|command|cmd$|helper|textconv|driver$|clean$|smudge$|editor|pager|askpass|"
    r"proxy$|pack$|fsmonitor$|hookspath|external|tool$|browser|viewer|difffilter|\.path$",
    re.IGNORECASE,
)
needs_bubblewrap = pytest.mark.skipif(
    choose_layer(LayerChoice.AUTO) is not Layer.BUBBLEWRAP,
    reason="hiding the config needs bubblewrap",
)


def test_every_program_key_git_lists_has_a_case() -> None:
    listed = subprocess.run(
        ["git", "help", "--config"], capture_output=True, text=True, check=True
    ).stdout.split()
    programs = [key for key in listed if _PROGRAMISH.search(key)]
    assert len(programs) > 40
    missing = [key for key in programs if key not in CASES and key not in NOT_RUN_HERE]
    assert missing == [], "\n".join(missing)


@needs_bubblewrap
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
async def test_the_program_runs_without_the_allow_list_and_not_with_it(
    case: Case, tmp_path: Path
) -> None:
    (tmp_path / "plain").mkdir()
    plain = make_repository(tmp_path / "plain", case)
    await asyncio.to_thread(
        subprocess.run,
        ["bash", "-c", case.trigger],
        cwd=plain,
        env=host_git_env(tmp_path / "plain"),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (plain / "MARKER").exists()

    (tmp_path / "guarded").mkdir()
    guarded = make_repository(tmp_path / "guarded", case)
    policy = SandboxPolicy.executing(guarded).for_host_git()
    result = await run_sandboxed(
        ["bash", "-c", case.trigger], policy, timeout=30, merge_stderr=True, extra_env=IDENTITY
    )
    assert not result.timed_out, result.stdout
    assert not (guarded / "MARKER").exists(), result.stdout


async def test_ordinary_git_still_works(tmp_path: Path) -> None:
    workspace = make_repository(tmp_path, Case("", ""))
    (workspace / "tracked.txt").write_text("two\n")
    # The host's own git run (the git tools): the one that may write the git directory.
    policy = SandboxPolicy.executing(workspace).for_host_git()
    script = "git diff && git add -A && git commit -qm two && git log --format=%s -p -1"
    result = await run_sandboxed(
        ["bash", "-c", script], policy, timeout=30, merge_stderr=True, extra_env=IDENTITY
    )
    assert result.exit_code == 0, result.stdout
    assert "+two" in result.stdout
    assert result.stdout.count("two") >= 3


@needs_bubblewrap
async def test_git_inside_sees_only_the_allow_listed_entries(tmp_path: Path) -> None:
    workspace = make_repository(
        tmp_path,
        Case(
            '[remote "origin"]\n\turl = ../up.git\n\tfetch = +refs/heads/*:refs/remotes/o/*\n'
            '[core]\n\tfsmonitor = x\n[filter "lfs"]\n\tclean = y\n[user]\n\tname = "a \\"b\\""\n',
            "",
        ),
    )
    policy = SandboxPolicy.read_only(workspace)
    result = await run_sandboxed(
        ["git", "config", "--list", "--show-scope"], policy, timeout=30, merge_stderr=True
    )
    local = [line.split("\t", 1)[1] for line in result.stdout.splitlines() if "local" in line]
    assert "remote.origin.url=../up.git" in local
    assert "remote.origin.fetch=+refs/heads/*:refs/remotes/o/*" in local
    assert 'user.name=a "b"' in local
    assert not [entry for entry in local if "fsmonitor" in entry or "filter" in entry]


def test_the_allow_list() -> None:
    for key in (
        "core.bare",
        "extensions.objectformat",
        "remote.a.b.url",
        "branch.main.merge",
        "user.email",
    ):
        assert is_allowed(key), key
    for key in (
        "core.fsmonitor",
        "core.x.bare",
        "extensions.a.b",
        "remote.origin.uploadpack",
        "include.path",
        "includeif.gitdir:/x.path",
        "gpg.ssh.program",
        "pretty.sig",
        "alias.st",
    ):
        assert not is_allowed(key), key


def test_listing_round_trips_through_git(tmp_path: Path) -> None:
    entries: list[tuple[str, str | None]] = [
        ("core.bare", None),
        ('remote.we.ird"\\.url', 'a "quoted" \\ value\twith tab\nand newline'),
        ('remote.we.ird"\\.fetch', "one"),
        ('remote.we.ird"\\.fetch', "two"),
    ]
    config = tmp_path / "config"
    config.write_text(render(entries))
    raw = subprocess.run(
        ["git", "config", "--file", str(config), "--list", "--show-scope", "--show-origin", "-z"],
        capture_output=True,
        check=True,
    ).stdout
    listing = parse_listing(raw.replace(b"command\0", b"local\0"))
    assert listing.entries == entries
    assert listing.origins == [str(config)] * len(entries)


def test_a_listing_that_does_not_parse_is_refused() -> None:
    with pytest.raises(ValueError, match="ends inside a record"):
        parse_listing(b"local\0file:.git/config\0core.bare\ntrue\0local\0")
    with pytest.raises(ValueError, match="unreadable key"):
        parse_listing(b"local\0file:.git/config\0nodot\0")
    raw = b"local\0file:.git/config\0core.bare\nfalse\0command\0command line:\0core.pager\nx\0"
    view = filtered(parse_listing(raw).entries)
    assert view.kept == [("core.bare", "false")]
    assert not view.needed


def test_a_git_file_or_commondir_is_refused_unless_plancord_made_it(tmp_path: Path) -> None:
    real = tmp_path / "real.git"
    real.mkdir()
    (real / "config").write_text("")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {real}\n")
    with pytest.raises(ForeignRepository, match="not a worktree plancord made"):
        locate(workspace)
    assert locate(workspace, git_dir=real) is not None
    (workspace / ".git").unlink()
    (workspace / ".git").mkdir()
    (workspace / ".git" / "commondir").write_text(str(real))
    with pytest.raises(ForeignRepository, match="commondir"):
        locate(workspace)
    common = locate(workspace, git_dir=workspace / ".git")
    assert common is not None
    assert common.config == real / "config"


async def test_a_foreign_git_file_refuses_the_run_with_a_clear_message(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    await asyncio.to_thread(subprocess.run, ["git", "init", "-q", str(elsewhere)], check=True)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    with pytest.raises(SandboxUnavailable, match="not a worktree plancord made"):
        await run_sandboxed(["true"], SandboxPolicy.read_only(workspace), timeout=9)
