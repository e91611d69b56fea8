"""The dashboard's Skills routes over a real server: the skills found, one skill's text,
trusting a working-directory skill (and `seam skills list` seeing it), owner-only."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from seam.core import ScriptedModel
from tests.web.harness import serving

SEAM = Path(sys.executable).with_name("seam")


def write_skill(folder: Path, name: str, description: str, body: str = "Do it.") -> Path:
    skill = folder / name
    (skill / "scripts").mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"
    (skill / "SKILL.md").write_text(text, encoding="utf-8")
    (skill / "scripts" / "run.py").write_text("print('hi')\n", encoding="utf-8")
    return skill


def cli_list(tmp_path: Path) -> str:
    """`seam skills list` as a person runs it, in the server's working dir and home."""
    env = {k: v for k, v in os.environ.items() if k != "SEAM_HOME"}
    env.update(SEAM_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    result = subprocess.run(
        [str(SEAM), "skills", "list"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


async def test_lists_skills_shows_one_and_trusts_it_as_the_cli_does(tmp_path: Path) -> None:
    project = tmp_path / ".agents" / "skills"
    folder = write_skill(project, "release-notes", "Write release notes from the git log.")
    write_skill(tmp_path / "home" / "skills", "tidy-imports", "Sort a module's imports.")
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        found = (await owner.get("/api/skills")).json()
        by_name = {s["name"]: s for s in found["skills"]}
        notes = by_name["release-notes"]
        assert notes["origin"] == "project" and notes["folder"] == str(folder)
        assert not notes["offered"] and not notes["trusted"] and notes["needs_trust"]
        assert notes["problem"].startswith("untrusted")
        assert by_name["tidy-imports"]["offered"] and by_name["tidy-imports"]["trusted"]
        assert [d["origin"] for d in found["looked_in"]][:2] == ["project", "home"]

        shown = (await owner.get("/api/skills/release-notes")).json()
        assert shown["body"] == "Do it." and shown["files"] == ["scripts/run.py"]
        assert shown["text"].startswith("NOT OFFERED: untrusted")
        assert "untrusted" in cli_list(tmp_path)

        trusted = await owner.post("/api/skills/release-notes/trust")
        assert trusted.status_code == 200, trusted.text
        assert trusted.json()["trusted"][0].startswith(f"trusted {folder} (sha256 ")
        after = trusted.json()["skills"][0]
        assert after["offered"] and after["trusted"] and after["problem"] == ""
        assert "untrusted" not in cli_list(tmp_path)

        # A change to its files untrusts it again, seen at once (nothing cached).
        (folder / "scripts" / "run.py").write_text("print('changed')\n", encoding="utf-8")
        again = {s["name"]: s for s in (await owner.get("/api/skills")).json()["skills"]}
        assert not again["release-notes"]["trusted"]


async def test_bad_names_and_home_skills_get_one_line_errors(tmp_path: Path) -> None:
    write_skill(tmp_path / "home" / "skills", "tidy-imports", "Sort a module's imports.")
    broken = tmp_path / ".agents" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no front matter\n", encoding="utf-8")
    async with serving(ScriptedModel([]), tmp_path) as served, served.client() as owner:
        missing = await owner.get("/api/skills/nope")
        assert missing.status_code == 404 and "no skill named 'nope'" in missing.text
        unreadable = await owner.get("/api/skills/broken")
        assert unreadable.status_code == 409 and "\n" not in unreadable.json()["error"]["message"]
        home = await owner.post("/api/skills/tidy-imports/trust")
        assert home.status_code == 409 and "needs no trust" in home.text
        assert (await owner.post("/api/skills/nope/trust")).status_code == 404
        too_long = await owner.get("/api/skills/" + "a" * 65)
        assert too_long.status_code == 422
        listed = {s["name"]: s for s in (await owner.get("/api/skills")).json()["skills"]}
        assert listed["broken"]["problem"].startswith("invalid")


async def test_a_tenant_key_is_refused(tmp_path: Path) -> None:
    write_skill(tmp_path / ".agents" / "skills", "release-notes", "Write release notes.")
    async with serving(ScriptedModel([]), tmp_path) as served, served.client("alpha") as alpha:
        assert (await alpha.get("/api/skills")).status_code == 403
        assert (await alpha.get("/api/skills/release-notes")).status_code == 403
        assert (await alpha.post("/api/skills/release-notes/trust")).status_code == 403
    assert not (tmp_path / "home" / "skills-trust.json").exists()
