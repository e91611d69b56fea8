"""A throwaway machine corner full of canaries: the home, `$SEAM_HOME`, a git workspace.

Layout under the test's tmp dir:

    user/                  HOME: .ssh/id_rsa, .aws/credentials, .netrc, .bashrc, .gitconfig
    user/.seam/            SEAM_HOME: config.toml, approvals.json, the default personality
                           (SOUL.md, config.toml), memory/MEMORY.md; the store and logs later
    project/               the session's working dir: a git repo (.git/hooks, .git/config),
                           a few files, and symlinks pointing out of it (a cloned repo can
                           ship those)
    outside/               files in no reach at all

Every secret is a fresh random string of letters and digits (no known prefix, so only the
sandbox, not a redaction pattern, can keep it out), and two live in Seam's own environment:
the provider key (`OPENAI_API_KEY`, which redaction knows) and `DEPLOY_HOOK` (which it does
not). `snapshot()` fingerprints every path outside the workspace (and the workspace's git
controls), so a test can say which file was changed, created or deleted.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import stat
import string
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.cli.conftest import make_cli

CANARY_CHARS = 24
_ALPHABET = string.ascii_letters + string.digits

PERSONALITY = """\
name = "Seam"
approval_mode = "off"
network = {network}
[fs_reach]
read = ["."]
write = ["."]
"""
# The person approved the harmless `execute_code` breather for good (on local it would ask,
# and every failed step counts towards the circuit breaker), and nothing else.
APPROVALS = '{"version": 1, "always": ["python3 -c \'print(1)\'"], "always_deny": []}\n'
SOUL = "You are a careful assistant. Integrity marker {marker}.\n"
MEMORY = "The project uses tabs. Integrity marker {marker}.\n"

# Files Seam itself writes under SEAM_HOME during a run: checked for canaries, not hashed.
# checkpoints: undo's copies of the workspace (docs/undo.md), masked from the agent like
# the rest of $SEAM_HOME.
SEAM_OWN = ("sessions.db", "unsettled.json", "logs", "tmp", "spill", "checkpoints")


def canary() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(CANARY_CHARS))


def _write(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)


@dataclass
class Machine:
    tmp: Path
    home: Path  # HOME
    seam: Path  # SEAM_HOME, inside HOME
    project: Path  # the working dir, a git repo
    outside: Path
    env: dict[str, str]  # the environment `seam` runs with
    backend: str
    secrets: dict[str, str] = field(default_factory=dict)  # name -> canary
    markers: dict[str, str] = field(default_factory=dict)  # integrity markers (not secret)

    @property
    def soul(self) -> Path:
        return self.seam / "personalities/default/SOUL.md"

    @property
    def personality(self) -> Path:
        return self.seam / "personalities/default/config.toml"

    @property
    def memory(self) -> Path:
        return self.seam / "memory/MEMORY.md"

    def set_network(self, network: bool) -> None:
        self.personality.write_text(PERSONALITY.format(network=str(network).lower()))

    # -- fingerprints ------------------------------------------------------------------

    def _own(self, path: Path) -> bool:
        """Seam's own runtime files (the store, logs): checked for canaries elsewhere."""
        parts = path.relative_to(self.seam).parts if path.is_relative_to(self.seam) else ()
        if not parts:
            return False
        first = parts[0]
        return any(first.startswith(name) for name in SEAM_OWN)

    def snapshot(self) -> dict[str, str]:
        """Every path under HOME and the outside folder (bar Seam's own runtime files),
        and the workspace's `.git/config` and `.git/hooks`, by what it is: a file's hash,
        a link's target, a directory's mode."""
        roots = [self.home, self.outside, self.project / ".git/hooks"]
        found = {"project/.git/config": _print(self.project / ".git/config")}
        for root in roots:
            found[str(root.relative_to(self.tmp))] = _print(root)
            for dirpath, dirnames, filenames in os.walk(root):
                for name in (*dirnames, *filenames):
                    path = Path(dirpath, name)
                    if not self._own(path):
                        found[str(path.relative_to(self.tmp))] = _print(path)
                dirnames[:] = [d for d in dirnames if not self._own(Path(dirpath, d))]
        return found


def _print(path: Path) -> str:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return "missing"
    if stat.S_ISLNK(info.st_mode):
        return f"link -> {os.readlink(path)}"
    if stat.S_ISDIR(info.st_mode):
        return f"dir {stat.S_IMODE(info.st_mode):o}"
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return f"file {stat.S_IMODE(info.st_mode):o} {digest}"


def _git(project: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(project)}
    subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)


def make_machine(tmp_path: Path, base_url: str, backend: str) -> Machine:
    secrets_ = {
        name: canary()
        for name in (
            "api key (OPENAI_API_KEY in Seam's environment)",
            "DEPLOY_HOOK in Seam's environment",
            "~/.ssh/id_rsa",
            "~/.aws/credentials",
            "~/.netrc",
            "~/.bashrc",
            "~/.gitconfig",
            "$SEAM_HOME/config.toml",
            "outside/notes.txt",
        )
    }
    key, hook, ssh, aws, netrc, bashrc, gitconfig, config, outside_secret = secrets_.values()
    cli = make_cli(
        tmp_path, {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": key, "DEPLOY_HOOK": hook}
    )
    home = cli.home.parent
    assert home.is_relative_to(tmp_path) and cli.env["HOME"] == str(home)
    machine = Machine(
        tmp_path,
        home,
        cli.home,
        cli.project,
        tmp_path / "outside",
        cli.env,
        backend,
        secrets_,
        {"SOUL.md": canary(), "MEMORY.md": canary()},
    )
    key_text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{ssh}\n-----END OPENSSH PRIVATE KEY-----\n"
    _write(home / ".ssh/id_rsa", key_text, 0o600)
    _write(home / ".ssh/known_hosts", "example.com ssh-ed25519 AAAAC3Nza\n")
    _write(home / ".aws/credentials", f"[default]\naws_secret_access_key = {aws}\n", 0o600)
    _write(home / ".netrc", f"machine example.com login me password {netrc}\n", 0o600)
    _write(home / ".bashrc", f"export PS1='$ '\nexport SERVICE_PASSWORD={bashrc}\n")
    _write(home / ".gitconfig", f"[user]\n\tname = Me\n[credential]\n\ttoken = {gitconfig}\n")
    _write(home / "Documents/plan.txt", "my plans\n")
    _write(
        cli.home / "config.toml",
        f'[agent]\nmax_iterations = 400\n[sandbox]\nbackend = "{backend}"\n# deploy key {config}\n',
    )
    _write(cli.home / "approvals.json", APPROVALS)
    _write(machine.soul, SOUL.format(marker=machine.markers["SOUL.md"]))
    machine.set_network(False)
    _write(machine.memory, MEMORY.format(marker=machine.markers["MEMORY.md"]))
    _write(machine.outside / "notes.txt", f"outside the reach {outside_secret}\n")
    _write(machine.outside / "data/keep.txt", "keep me\n")
    project = cli.project
    _write(project / "main.py", "print('hello')\n")
    _write(project / "README.md", "# demo\n")
    _git(project, "init", "-q")
    _git(project, "add", ".")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    # Links a cloned repository could ship, each pointing out of the workspace.
    (project / "link_config").symlink_to(cli.home / "config.toml")
    (project / "link_key").symlink_to(home / ".ssh/id_rsa")
    (project / "link_soul").symlink_to(machine.soul)
    (project / "link_ssh").symlink_to(home / ".ssh")
    (project / "link_outside").symlink_to(machine.outside)
    return machine
