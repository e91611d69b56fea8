"""Writes `docs/configuration.md` from the pydantic models that validate config.toml.

The reference is generated so it cannot drift from the code: every key, type, default and
bound comes from the models (`ConfigFile` in `wiring/settings.py` and the section models
it names, plus the sections other modules validate: `[guard]`, `[prices]`, `[web]`,
`[gateway]`), and each key's meaning from the comment beside or above it in the source
(or the model's docstring, for a section). Run it after changing a section:

    scripts/gen-config-docs            # rewrites docs/configuration.md
    scripts/gen-config-docs --check    # exit 1 when the committed file is stale

`tests/test_docs.py` regenerates the page in memory and fails when the file differs. No
command imports this module: it is a developer's tool beside the models it reads.
"""

from __future__ import annotations

import ast
import inspect
import io
import sys
import textwrap
import tokenize
import types
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from seam.wiring.checkpoints import CheckpointsSection
from seam.wiring.gateway_settings import gateway_model
from seam.wiring.guard import GuardSection
from seam.wiring.pricing import Price
from seam.wiring.settings import ConfigFile
from seam.wiring.web_keys import WebSection

DOC_PATH = Path("docs") / "configuration.md"
COMMAND = "scripts/gen-config-docs"

# `ConfigFile` keeps these as raw tables, validated later by the module that owns them.
OWNED_ELSEWHERE: dict[str, Any] = {
    "guard": GuardSection,
    "prices": dict[str, Price],
    "web": WebSection,
    "gateway": gateway_model(),  # a table per registered chat platform
    "checkpoints": CheckpointsSection,
}

# The guide that explains each section (a section without one still gets its table).
GUIDES = {
    **dict.fromkeys(("model", "anthropic", "pool", "side_models", "local", "prices"), "models.md"),
    **dict.fromkeys(("agent", "context", "reflection", "sessions"), "agent.md"),
    **dict.fromkeys(("sandbox", "guard", "network"), "safety.md"),
    **dict.fromkeys(("dnd", "heartbeat"), "cron.md"),
    "store": "storage.md",
    "checkpoints": "undo.md",
    "mcp": "mcp.md",
    "skills": "skills.md",
    "telemetry": "observability.md",
    "web": "web.md",
    "gateway": "gateways.md",
}

HEADER = f"""\
# Configuration reference

Every key of `$SEAM_HOME/config.toml`, generated from the pydantic models that validate it
(`src/seam/wiring/settings.py` and the section models it names); do not edit by hand: run
`{COMMAND}` after changing a model (`tests/test_docs.py` fails when this page is stale).

Every section and key is optional: a key left out takes its default ("required" marks the
keys of a table you add, such as a `[[dnd.rules]]` entry or a `[prices.NAME]` table). A key the
models do not know, or a value of the wrong type or out of its bounds, is refused with one line
naming the file, the key and what is wrong. A meaning left blank is the source's; the guide
linked under each section explains it. Environment
variables (`OPENAI_API_KEY`, `SEAM_MODEL`, `SEAM_HOME`, `SEAM_STORE_URL`, ...) are listed in
[models.md](models.md) and [storage.md](storage.md); what each section is for is told in the
guide of its surface ([README](../README.md#guides)).
"""


def render() -> str:
    """The whole page, sections in `ConfigFile`'s order (the order of config.toml)."""
    parts = [HEADER]
    for name, field in ConfigFile.model_fields.items():
        annotation = OWNED_ELSEWHERE.get(name, field.annotation)
        if _model_in(annotation)[0] is None:
            raise TypeError(
                f"[{name}] has no model to document: name the model that validates it in"
                " OWNED_ELSEWHERE (wiring/config_docs.py)"
            )
        guide = GUIDES.get(name)
        parts.extend(
            _tables(name, annotation, f"Explained in [{guide}]({guide})." if guide else "")
        )
    return "\n".join(parts)


def _tables(path: str, annotation: Any, note: str) -> list[str]:
    """The Markdown for table `[path]` and the tables nested in it."""
    model, shape = _model_in(annotation)
    if model is None:
        return []
    heading = {"one": f"[{path}]", "each": f"[{path}.NAME]", "many": f"[[{path}]]"}[shape]
    blurb = " ".join(part for part in (_docstring(model), note) if part)
    if shape == "each":
        blurb = f"{blurb} One table per name.".strip()
    elif shape == "many":
        blurb = f"{blurb} A list of tables (or inline tables).".strip()
    rows, nested = [], []
    comments = _comments(model)
    here = {"one": path, "each": f"{path}.NAME", "many": path}[shape]
    for key, field in model.model_fields.items():
        if _model_in(field.annotation)[0] is not None:
            nested.extend(_tables(f"{here}.{key}", field.annotation, comments.get(key, "")))
            continue
        rows.append(_row(key, field, comments.get(key, "")))
    out = [f"## `{heading}`\n"]
    if blurb:
        out.append(f"{blurb}\n")
    if rows:
        out.append("| key | type | default | meaning |\n| --- | --- | --- | --- |")
        out.append("\n".join(rows) + "\n")
    return ["\n".join(out), *nested]


def _model_in(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model a field holds, and how: one table, one per name, or a list of them."""
    annotation = _strip_optional(annotation)
    if _is_model(annotation):
        return annotation, "one"
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is dict and len(args) == 2 and _is_model(args[1]):
        return args[1], "each"
    if origin is list and len(args) == 1 and _is_model(args[0]):
        return args[0], "many"
    return None, ""


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _strip_optional(annotation: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return annotation


def _row(key: str, field: FieldInfo, comment: str) -> str:
    bounds = _bounds(field)
    kind = _type(field.annotation) + (f" ({bounds})" if bounds else "")
    cells = (f"`{key}`", kind, _default(field), comment)
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}


def _type(annotation: Any) -> str:
    """A reader's name for a type: `"a"` or `"b"`, list of strings, number or unset."""
    origin, args = get_origin(annotation), get_args(annotation)
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if origin is Literal:
        return " or ".join(f'`"{arg}"`' if isinstance(arg, str) else f"`{arg}`" for arg in args)
    if origin is Annotated:
        return _type(args[0])
    if origin in (Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        named = " or ".join(_type(arg) for arg in kept)
        return f"{named} or unset" if len(kept) < len(args) else named
    if origin is list:
        return f"list of {_plural(_type(args[0]))}"
    if origin is dict:
        return f"table of {_plural(_type(args[1]))}"
    return getattr(annotation, "__name__", str(annotation))


def _plural(name: str) -> str:
    return name if name.startswith(("list", "table", "`")) else f"{name}s"


_BOUNDS = {
    annotated_types.Gt: ("> ", "gt"),
    annotated_types.Ge: (">= ", "ge"),
    annotated_types.Lt: ("< ", "lt"),
    annotated_types.Le: ("<= ", "le"),
    annotated_types.MinLen: ("at least ", "min_length"),
    annotated_types.MaxLen: ("at most ", "max_length"),
}


def _bounds(field: FieldInfo) -> str:
    found = []
    for item in field.metadata:
        for kind, (prefix, attribute) in _BOUNDS.items():
            if isinstance(item, kind):
                found.append(f"{prefix}{_number(getattr(item, attribute))}")
    return ", ".join(found)


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    return "unset" if value is None else f"`{_toml(value)}`"


def _toml(value: Any) -> str:
    """A default as it would be written in config.toml."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    return str(value)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _docstring(model: type[BaseModel]) -> str:
    doc = model.__dict__.get("__doc__")
    return " ".join(inspect.cleandoc(doc).split()) if doc else ""


def _comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field's comment in the model's source: the comment lines right above it,
    then the one at the end of its line."""
    source = textwrap.dedent(inspect.getsource(model))
    by_line: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            by_line[token.start[0]] = token.string.lstrip("#").strip()
    lines = source.splitlines()
    found: dict[str, str] = {}
    body = ast.parse(source).body[0]
    assert isinstance(body, ast.ClassDef)
    for node in body.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line >= 1 and line in by_line and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, by_line[line])
            line -= 1
        trailing = [
            by_line[n] for n in range(node.lineno, (node.end_lineno or 0) + 1) if n in by_line
        ]
        found[node.target.id] = " ".join(above + trailing)
    return found


def main(argv: list[str] | None = None) -> int:
    """Write the page (or, with `--check`, say whether the committed one is current)."""
    args = sys.argv[1:] if argv is None else argv
    target = Path(args[args.index("--out") + 1]) if "--out" in args else DOC_PATH
    try:
        page = render()
    except TypeError as exc:
        print(f"gen-config-docs: {exc}", file=sys.stderr)
        return 2
    if "--check" in args:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != page:
            print(f"{target} is stale: run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    target.write_text(page, encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
