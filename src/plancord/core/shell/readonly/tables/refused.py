"""Commands that are never read-only, with the reason a user reads when one is refused.

A command missing from every table is refused anyway; this list only makes the reason
precise ("starts another shell" rather than "not known").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final


def _each(reason: str, names: str) -> dict[str, str]:
    return {name: reason.format(name) for name in names.split()}


_REFUSED: Final[Mapping[str, str]] = {
    **_each(
        "`{}` starts another shell, which can run anything",
        "bash sh zsh dash ksh mksh fish csh tcsh ash busybox rbash",
    ),
    **_each(
        "`{}` runs another command, which plan mode cannot check",
        "nice nohup timeout sudo doas su stdbuf script flock chroot setsid unshare "
        "nsenter ionice taskset watch parallel strace ltrace gdb chrt runuser systemd-run "
        "fakeroot faketime time pkexec",
    ),
    **_each(
        "`{}` runs code",
        "python python3 python2 pypy pypy3 node nodejs deno bun perl ruby irb php lua luajit "
        "tclsh wish Rscript R julia pwsh powershell osascript java javac gcc cc c++ g++ "
        "clang clang++ rustc ghc ghci swift dotnet scala groovy kotlin erl elixir iex go "
        "jshell",
    ),
    **_each(
        "`{}` builds or tests code, which runs it",
        "make gmake cmake ninja meson bazel gradle gradlew mvn ant rake pytest tox nox jest "
        "mocha vitest ctest cargo just",
    ),
    **_each(
        "`{}` is a package manager and can install or run code",
        "apt apt-get aptitude dpkg yum dnf rpm brew snap flatpak pip pip3 pipx uv poetry pdm "
        "conda mamba micromamba npm npx pnpm yarn gem bundle composer nix pacman apk zypper "
        "port",
    ),
    **_each(
        "`{}` changes files",
        "cp mv rm mkdir rmdir touch chmod chown chgrp ln install truncate shred mktemp unlink "
        "rsync patch split csplit tee dd link mkfifo mknod setfacl chattr rename sponge",
    ),
    **_each(
        "`{}` can write archives or extract files",
        "tar zip unzip gzip gunzip bzip2 bunzip2 xz unxz 7z 7za zstd unzstd ar cpio rar "
        "unrar lz4 zcat",
    ),
    **_each(
        "`{}` talks to the network",
        "curl wget nc ncat netcat ssh scp sftp ftp telnet socat dig nslookup host ping "
        "traceroute http https aria2c openssl whois nmap",
    ),
    **_each(
        "`{}` is an editor or pager that can run commands",
        "vi vim nvim view emacs nano ed ex less more most pico micro",
    ),
    "eval": "`eval` runs a string as a command",
    "source": "`source` runs a script in the current shell",
    ".": "`.` runs a script in the current shell",
    "exec": "`exec` replaces the shell or changes its file descriptors",
    "builtin": "`builtin` runs shell builtins past the checks",
    "trap": "`trap` sets commands the shell runs later",
    "hash": "`hash` changes where the shell finds commands",
    "alias": "aliases change what later commands mean",
    "unalias": "aliases change what later commands mean",
    "history": "`history` can write the history file",
    "fc": "`fc` runs commands again from the history",
    "coproc": "`coproc` starts a background command",
    "function": "defining shell functions is not allowed",
    **_each(
        "`{}` assigns shell variables, which changes what later commands do",
        "read mapfile readarray declare typeset local export readonly unset",
    ),
    "let": "`let` evaluates arithmetic, where array subscripts can run code",
    **_each(
        "`{}` changes the shell's options or limits",
        "set shopt enable ulimit umask bind complete compgen",
    ),
    **_each(
        "`{}` controls jobs or processes",
        "kill pkill killall wait fg bg disown jobs suspend",
    ),
    **_each(
        "`{}` changes the shell's flow or directory stack",
        "exit return break continue shift getopts pushd popd dirs logout",
    ),
}
REFUSED_TOO: Final[Mapping[str, str]] = {
    "yes": "`yes` prints forever",
    "sleep": "`sleep` only waits",
    "tee": "`tee` writes files",
}

REFUSED: Final[Mapping[str, str]] = {**_REFUSED, **REFUSED_TOO}
