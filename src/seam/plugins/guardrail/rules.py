"""The hard floor and the dangerous patterns, as data: a name, a one-line reason, a test.

Every test looks at one `Cmd`: a simple command after normalisation (quoting resolved,
wrappers seen through, paths canonical), with the earlier stages of its pipeline. The
floor is `forbidden` whatever the user's rules say; a pattern needs the person's approval.
Rules name the programs they are about, so a command is only tested against the few
rules that could match it.

This module is pure rule data (each rule's name, reason, test and programs); the tests
live in `danger/` and `Cmd` in `command.py`.
"""

from __future__ import annotations

import re

from seam.plugins.guardrail.command import Cmd, Rule, TextRule, recursive
from seam.plugins.guardrail.danger.code import (
    DOWNLOADERS,
    NETWORK_SENDERS,
    decode_into_interpreter,
    destructive_sql,
    download_into_interpreter,
    inline_code,
    is_dynamic,
    pipe_into_shell,
    reverse_shell,
    run_downloaded,
    secret_exfil,
)
from seam.plugins.guardrail.danger.files import (
    chmod_world_recursive,
    find_deletes,
    move_important,
    perm_system,
    relative_startup,
    rm_bulk,
    rm_important,
    writes_etc,
    writes_home_config,
    writes_path_dir,
    writes_system,
)
from seam.plugins.guardrail.danger.floor import (
    dd_disk,
    find_delete_root,
    kill_all,
    mkfs_device,
    move_root,
    perm_root,
    powers_off,
    rm_root,
    rsync_delete_root,
    rsync_deletes,
    writes_block_device,
    writes_ssh_dir,
    writes_startup_file,
    writes_sysrq,
)
from seam.plugins.guardrail.danger.tools import (
    always,
    crontab_remove,
    crontab_replace,
    dd_disk_read,
    destroys,
    docker_destroy,
    firewall_flush,
    git_branch_delete,
    git_clean,
    git_force_push,
    git_push_delete,
    git_reset_hard,
    git_rewrite,
    kill_9,
    kubectl_delete,
    makes_file_system,
    partitions_disk,
    publishes,
    service_stop,
)

__all__ = ["DOWNLOADERS", "FLOOR", "PATTERNS", "TEXT_FLOOR", "Cmd", "Rule", "TextRule"]

FORK_BOMB = TextRule(
    "floor:fork-bomb",
    "a fork bomb: it multiplies processes until the machine stops responding",
    re.compile(
        # Names are bounded and start at a word edge, so a huge token cannot make this slow.
        r"(?<![\w:.-])(?P<f>[\w:.-]{1,64})\s*\(\s*\)\s*\{[^}]*?(?P=f)\s*\|\s*(?P=f)\s*&"
        r"|\bfunction\s+(?P<g>[\w:.-]{1,64})\s*(?:\(\s*\))?\s*\{[^}]*?(?P=g)\s*\|\s*(?P=g)\s*&"
        r"|\bfork\s+while\s+fork\b"
        r"|while\s*\(?\s*(?:true|1|True)\s*\)?\s*[:;]?\s*(?:do\s+)?os\.fork\(\)"
    ),
)
TEXT_FLOOR: tuple[TextRule, ...] = (FORK_BOMB,)

FLOOR: tuple[Rule, ...] = (
    Rule(
        "floor:rm-root",
        "deletes the root, a system directory or a whole home directory",
        rm_root,
        frozenset({"rm"}),
    ),
    Rule(
        "floor:move-root",
        "moves away the root, a system directory or a whole home directory",
        move_root,
        frozenset({"mv"}),
    ),
    Rule(
        "floor:chmod-root",
        "changes permissions recursively on the root, a system or a home directory",
        perm_root,
        frozenset({"chmod"}),
    ),
    Rule(
        "floor:chown-root",
        "changes ownership recursively on the root, a system or a home directory",
        perm_root,
        frozenset({"chown", "chgrp"}),
    ),
    Rule(
        "floor:find-delete-root",
        "deletes every file under the root, a system or a home directory",
        find_delete_root,
        frozenset({"find"}),
    ),
    Rule(
        "floor:rsync-delete-root",
        "mirrors onto the root, a system or a home directory, deleting what is there",
        rsync_delete_root,
        frozenset({"rsync"}),
    ),
    Rule(
        "floor:mkfs-device",
        "formats a disk device, destroying everything on it",
        mkfs_device,
    ),
    Rule(
        "floor:dd-disk",
        "writes raw data onto a disk device",
        dd_disk,
        frozenset({"dd"}),
    ),
    Rule(
        "floor:block-device-write",
        "writes onto a disk device",
        writes_block_device,
    ),
    Rule(
        "floor:startup-file-write",
        "writes to a shell startup file, which runs in every future shell",
        writes_startup_file,
    ),
    Rule(
        "floor:ssh-dir-write",
        "writes into ~/.ssh (keys and authorized_keys)",
        writes_ssh_dir,
    ),
    Rule(
        "floor:power",
        "shuts down or reboots the machine",
        powers_off,
        frozenset({"shutdown", "reboot", "halt", "poweroff", "init", "telinit", "systemctl"}),
    ),
    Rule(
        "floor:sysrq",
        "writes to /proc/sysrq-trigger (instant reboot or crash)",
        writes_sysrq,
    ),
    Rule(
        "floor:kill-all",
        "kills every process the user can reach",
        kill_all,
        frozenset({"kill", "killall5"}),
    ),
)


PATTERNS: tuple[Rule, ...] = (
    Rule(
        "pattern:curl-pipe-shell",
        "runs a script downloaded from the network without showing it",
        download_into_interpreter,
    ),
    Rule(
        "pattern:run-downloaded",
        "runs a script downloaded from the network earlier in the same command",
        run_downloaded,
    ),
    Rule(
        "pattern:decode-pipe-shell",
        "decodes hidden text and runs it as a program",
        decode_into_interpreter,
    ),
    Rule(
        "pattern:pipe-into-shell",
        "pipes output into a shell, so what runs cannot be seen",
        pipe_into_shell,
    ),
    Rule(
        "pattern:dynamic-command",
        "the program to run is computed at run time, so it cannot be checked",
        is_dynamic,
    ),
    Rule("pattern:rm-recursive", "deletes a directory tree", recursive, frozenset({"rm"})),
    Rule(
        "pattern:rm-bulk",
        "deletes every file it is fed (xargs, find -exec)",
        rm_bulk,
        frozenset({"rm", "unlink", "shred"}),
    ),
    Rule(
        "pattern:rm-important",
        "deletes a system file, credentials, a shell startup file or everything here",
        rm_important,
        frozenset({"rm", "unlink"}),
    ),
    Rule(
        "pattern:move-important",
        "moves away a system file, credentials or a shell startup file",
        move_important,
        frozenset({"mv"}),
    ),
    Rule(
        "pattern:rsync-delete",
        "deletes files at the destination that the source does not have",
        rsync_deletes,
        frozenset({"rsync"}),
    ),
    Rule(
        "pattern:find-delete",
        "find -delete removes every file that matches",
        find_deletes,
        frozenset({"find"}),
    ),
    Rule(
        "pattern:chmod-777-recursive",
        "makes a whole tree writable by everyone",
        chmod_world_recursive,
        frozenset({"chmod"}),
    ),
    Rule(
        "pattern:chown-recursive",
        "changes the owner of a whole tree",
        recursive,
        frozenset({"chown", "chgrp"}),
    ),
    Rule(
        "pattern:system-permissions",
        "changes permissions or owners of system files or credentials",
        perm_system,
        frozenset({"chmod", "chown", "chgrp", "chattr"}),
    ),
    Rule(
        "pattern:etc-write",
        "writes system configuration under /etc",
        writes_etc,
    ),
    Rule(
        "pattern:system-write",
        "writes into a system directory (/usr, /var, /boot, ...)",
        writes_system,
    ),
    Rule(
        "pattern:path-dir-write",
        "puts a program in a directory on PATH, where it shadows the real one",
        writes_path_dir,
    ),
    Rule(
        "pattern:home-config-write",
        "writes credentials or a login item in your home directory",
        writes_home_config,
    ),
    Rule(
        "pattern:startup-file-relative",
        "writes a file named like a shell startup file (.bashrc, .profile, ...)",
        relative_startup,
    ),
    Rule(
        "pattern:sql-destructive",
        "drops, truncates or empties database data",
        destructive_sql,
    ),
    Rule(
        "pattern:git-force-push",
        "rewrites history on the remote (force push)",
        git_force_push,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:git-push-delete",
        "deletes a branch or tag on the remote",
        git_push_delete,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:git-reset-hard",
        "throws away uncommitted changes",
        git_reset_hard,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:git-clean",
        "deletes untracked files",
        git_clean,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:git-branch-force-delete",
        "deletes a branch even if it was never merged",
        git_branch_delete,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:git-history-rewrite",
        "rewrites history or drops stashed work",
        git_rewrite,
        frozenset({"git"}),
    ),
    Rule(
        "pattern:privilege",
        "runs with another user's (usually root's) privileges",
        always,
        frozenset({"sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser"}),
    ),
    Rule(
        "pattern:killall",
        "kills processes by name or pattern",
        always,
        frozenset({"killall", "pkill"}),
    ),
    Rule(
        "pattern:kill-9",
        "kills a process without letting it clean up",
        kill_9,
        frozenset({"kill"}),
    ),
    Rule(
        "pattern:service-stop",
        "stops, disables or masks a system service",
        service_stop,
        frozenset({"systemctl", "service", "launchctl"}),
    ),
    Rule(
        "pattern:crontab-remove",
        "removes every scheduled job of the user",
        crontab_remove,
        frozenset({"crontab"}),
    ),
    Rule(
        "pattern:crontab-replace",
        "replaces the user's scheduled jobs",
        crontab_replace,
        frozenset({"crontab"}),
    ),
    Rule(
        "pattern:firewall-flush",
        "removes firewall rules or changes the default policy",
        firewall_flush,
        frozenset({"iptables", "ip6tables", "iptables-legacy", "iptables-nft", "nft", "ufw"}),
    ),
    Rule(
        "pattern:docker-destroy",
        "force-removes containers or deletes images, volumes or data",
        docker_destroy,
        frozenset({"docker", "podman", "docker-compose", "podman-compose"}),
    ),
    Rule(
        "pattern:kubectl-delete",
        "deletes or replaces cluster resources",
        kubectl_delete,
        frozenset({"kubectl", "oc"}),
    ),
    Rule(
        "pattern:infra-destroy",
        "destroys managed infrastructure",
        destroys,
        frozenset({"terraform", "tofu", "pulumi", "cdk"}),
    ),
    Rule(
        "pattern:package-publish",
        "publishes a package for everyone to download",
        publishes,
    ),
    Rule(
        "pattern:user-delete",
        "deletes a user or group account",
        always,
        frozenset({"userdel", "deluser", "groupdel", "delgroup"}),
    ),
    Rule(
        "pattern:secret-exfil",
        "sends credentials (ssh keys, cloud or .env secrets) over the network",
        secret_exfil,
        NETWORK_SENDERS,
    ),
    Rule(
        "pattern:reverse-shell",
        "connects a shell to the network",
        reverse_shell,
    ),
    Rule(
        "pattern:inline-code-destructive",
        "inline code that deletes files or runs other programs",
        inline_code,
    ),
    Rule(
        "pattern:mkfs",
        "creates a file system, overwriting the target",
        makes_file_system,
    ),
    Rule(
        "pattern:partition",
        "changes a disk's partition table",
        partitions_disk,
        frozenset({"fdisk", "sfdisk", "gdisk", "sgdisk", "cfdisk", "parted"}),
    ),
    Rule(
        "pattern:dd-disk-read",
        "reads a raw disk device",
        dd_disk_read,
        frozenset({"dd"}),
    ),
    Rule(
        "pattern:shred",
        "destroys file contents beyond recovery",
        always,
        frozenset({"shred", "wipe", "srm"}),
    ),
)
