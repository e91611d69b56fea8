"""The docs stay true: the configuration reference matches the models, and every relative
link in README.md and docs/ reaches a file (and a heading, when it names one)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from seam.wiring import config_docs
from seam.wiring.settings import ConfigFile

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
TOML = re.compile(r"^```toml\n(.*?)^```", re.S | re.M)


def test_configuration_reference_is_current() -> None:
    committed = (ROOT / config_docs.DOC_PATH).read_text(encoding="utf-8").splitlines()
    fresh = config_docs.render().splitlines()
    if committed != fresh:
        line = next(
            (n for n, (a, b) in enumerate(zip(committed, fresh, strict=False), 1) if a != b),
            min(len(committed), len(fresh)) + 1,
        )
        pytest.fail(
            f"docs/configuration.md is stale from line {line}: run {config_docs.COMMAND}",
            pytrace=False,
        )


def test_the_generator_says_when_the_page_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "configuration.md"
    assert config_docs.main(["--out", str(page)]) == 0
    assert config_docs.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8") + "edited by hand\n", encoding="utf-8")
    assert config_docs.main(["--check", "--out", str(page)]) == 1
    assert capsys.readouterr().err == f"{page} is stale: run {config_docs.COMMAND}\n"


def test_a_section_without_a_model_is_an_error_not_a_gap(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delitem(config_docs.OWNED_ELSEWHERE, "web")
    assert config_docs.main(["--check"]) == 2
    assert capsys.readouterr().err.startswith("gen-config-docs: [web] has no model to document")


def test_the_reference_lists_every_section_in_config_order() -> None:
    page = config_docs.render()
    headings = re.findall(r"^## `\[+([a-z_]+)[.\]]", page, re.M)
    sections = list(ConfigFile.model_fields)
    assert [name for name in dict.fromkeys(headings)] == sections


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_config_examples_in_the_docs_are_valid(page: Path) -> None:
    """Every `config.toml` example a guide shows passes the models that read it."""
    for block in TOML.findall(page.read_text(encoding="utf-8")):
        data = tomllib.loads(block)
        ConfigFile.model_validate(data)
        for name, model in config_docs.OWNED_ELSEWHERE.items():
            if name in data:
                TypeAdapter(model).validate_python(data[name])


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def _links(page: Path) -> list[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in _links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        missing_anchor = anchor and file.suffix == ".md" and anchor not in _anchors(file)
        if not file.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def test_every_guide_is_reachable_from_the_readme() -> None:
    seen: set[Path] = set()
    todo = [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in seen or page.suffix != ".md" or not page.exists():
            continue
        seen.add(page)
        todo.extend(
            (page.parent / t.partition("#")[0]).resolve()
            for t in _links(page)
            if t.partition("#")[0]
        )
    missing = [p.name for p in PAGES if p not in seen]
    assert not missing, f"not reachable from README.md: {missing}"
