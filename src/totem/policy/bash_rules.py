"""What an "always" reply to a bash question stores: a narrow rule for each command.

A command that only looks or builds is remembered with its subcommand: `git status *`,
`npm run test *`, `cargo build *`, `ls *`. A command that deletes, moves, overwrites, changes
permissions, downloads, or runs code given to it (`rm`, `mv`, `chmod`, `curl`, `python`,
`bash`, `xargs`, `find -delete`, `git push`, `npm install`...) is remembered as exactly that
command, and so is a program run by its path (`./build.sh`): "always" then allows only what
was shown, never the next, different deletion. A command that `xargs` runs is not
remembered at all: what it acts on comes from its input.
"""

from __future__ import annotations

import os
import re

from totem.policy.shell_parse import _MAX_DEPTH, _scan, _unwrap

__all__ = ["always_rules", "exact_pattern", "run_by_xargs"]

# Commands that delete, move or overwrite files, change permissions or the system, reach the
# network, or run code they are given.
_EXACT_ONLY = frozenset(
    """
    rm rmdir unlink shred srm mv cp dd install ln link truncate rsync tee sed awk gawk mawk nawk
    tar unzip zip gzip gunzip bzip2 xz unxz zstd 7z patch split csplit
    chmod chown chgrp chattr setfacl umask mkfs fdisk parted mount umount losetup
    kill pkill killall reboot shutdown halt poweroff systemctl service crontab at batch
    curl wget scp sftp ftp ssh nc ncat netcat socat telnet aria2c http https
    sh bash zsh dash ksh fish csh tcsh python python2 python3 pypy pypy3 node deno bun perl ruby
    php lua luajit Rscript julia java osascript eval exec source . xargs parallel env sudo doas su
    nohup timeout nice watch script expect open xdg-open npx bunx uvx pipx
    docker podman kubectl helm terraform ansible ansible-playbook vagrant
    """.split()
)

# Programs whose first word names what they do; "always" keeps that word.
_WITH_SUBCOMMAND = frozenset(
    """
    git npm pnpm yarn cargo go uv poetry pip pip3 make just gh rustup dotnet mvn gradle
    conda mamba brew apt apt-get dnf yum pacman tox nox hatch pdm composer bundle gem mix
    """.split()
)

# Subcommands that delete, download, publish, or run code given to them.
_RISKY_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset(
        "push reset clean checkout restore switch rm mv rebase pull fetch clone config "
        "submodule filter-branch filter-repo gc prune reflog update-ref branch stash tag "
        "apply am cherry-pick revert merge bisect worktree remote".split()
    ),
}
_RISKY_ANY = frozenset(
    "install i add ci remove rm uninstall un purge update upgrade up get exec x dlx run "
    "publish link unlink clean clear prune delete del destroy deploy sync download self "
    "tool global cache config set".split()
)
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})  # `npm run test`: a project script
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint",
                           "-fprint0", "-fprintf", "-fls"})
_GLOB = re.compile(r"([*?\[])")


def exact_pattern(command: str) -> str:
    """A pattern that matches this command and no other (`*`, `?`, `[` taken literally)."""
    return _GLOB.sub(r"[\1]", command)


def _narrow(words: list[str]) -> str | None:
    """The narrow rule for a command, or None when only the exact command may be stored."""
    program = words[0]
    head = os.path.basename(program)
    if "/" in program or head in _EXACT_ONLY:
        return None
    if head == "find":
        return None if _FIND_ACTIONS & set(words) else "find *"
    if head not in _WITH_SUBCOMMAND:
        return f"{exact_pattern(head)} *"
    if len(words) < 2 or words[1].startswith("-"):
        return None  # options before the subcommand (`git -c ...`) can change what runs
    sub = words[1]
    if sub in _RISKY_SUBCOMMANDS.get(head, frozenset()):
        return None
    if head in _SCRIPT_RUNNERS and sub == "run" and len(words) > 2:
        script = words[2]
        return None if script.startswith("-") else f"{head} run {exact_pattern(script)} *"
    if sub in _RISKY_ANY:
        return None
    return f"{head} {exact_pattern(sub)} *"


def run_by_xargs(line: str, depth: int = 0) -> set[str]:
    """The commands of a line that `xargs` runs (as `split_commands` gives them): their
    arguments come from their input, so no rule can say what they will do."""
    if depth > _MAX_DEPTH:
        return set()
    scan = _scan(line)
    found: set[str] = set()
    for words in scan.commands:
        inner, scripts = _unwrap(words)
        wrappers = words[: len(words) - len(inner)] if inner else []
        if any(os.path.basename(word) == "xargs" for word in wrappers):
            found.add(" ".join(inner))
        for script in scripts:
            found |= run_by_xargs(script, depth + 1)
    for script in scan.nested:
        found |= run_by_xargs(script, depth + 1)
    return found


def always_rules(commands: list[str], *, line: str = "") -> list[str]:
    """The bash patterns an "always" reply stores for these commands (as `split_commands`
    gives them from `line`), each once, in order. A command run by `xargs` gets none: it is
    asked about each time."""
    fed = run_by_xargs(line) if "xargs" in line else set()
    rules: list[str] = []
    for command in commands:
        if command in fed:
            continue
        words = command.split(" ")
        rule = _narrow(words) or exact_pattern(command)
        if rule not in rules:
            rules.append(rule)
    return rules
