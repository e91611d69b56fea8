"""A personality's `config.toml` as a form: the pydantic model whose JSON Schema the page
turns into fields, and the merge of a form's values back into the file.

The model mirrors the keys the personality loader knows (`plugins/personalities/files.py`
`CONFIG_KEYS`; a test keeps the two equal) with the same types, checked strictly (a
string is never taken for a boolean), so a bad value is refused with its field's name
before anything is written. The merged file is then checked again by loading it exactly
as a start-up would (`personality_problem`), so the form cannot write what `config.toml`
would refuse. The merge goes through tomlkit: the file's comments and order stay.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import tomlkit
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Table

from seam.apps.web.problems import Invalid

# The longest SOUL.md the API takes (`PersonalityFiles.soul` in app.py; a test keeps the
# two equal): the limit the page counts characters against.
SOUL_LIMIT = 200_000
Name = Annotated[str, Field(min_length=1, max_length=500)]
Names = Annotated[list[Name], Field(max_length=500)]


class FsReach(BaseModel):
    """`[fs_reach]`: where the personality's file tools may read and write."""

    model_config = ConfigDict(extra="forbid", strict=True, title="File reach")

    read: Names | None = Field(
        None, description='Folders its file tools may read ("." is the working directory).'
    )
    write: Names | None = Field(
        None, description='Folders its file tools may write ("." is the working directory).'
    )


Tokens = Annotated[int, Field(ge=0)]
Dollars = Annotated[float, Field(ge=0)]


class PersonalityBudget(BaseModel):
    """`[budget]`: the personality's own spending limits (docs/budgets.md); 0: none."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Budget")

    session_tokens: Tokens | None = Field(None, description="Tokens per session.")
    session_usd: Dollars | None = Field(None, description="Cost per session, in USD.")
    day_tokens: Tokens | None = Field(None, description="Tokens per day, all sessions.")
    day_usd: Dollars | None = Field(None, description="Cost per day, in USD.")
    job_tokens: Tokens | None = Field(None, description="Tokens per cron job run.")
    job_usd: Dollars | None = Field(None, description="Cost per cron job run, in USD.")


class PersonalitySettings(BaseModel):
    """What a personality's `config.toml` may set; a field left out keeps the file's
    value, a field sent as null removes the key (its default applies)."""

    model_config = ConfigDict(extra="forbid", strict=True, title="Personality settings")

    name: str | None = Field(None, max_length=500, description="The name it is shown by.")
    description: str | None = Field(None, max_length=5_000, description="One line about it.")
    model: str | None = Field(
        None, max_length=500, description='Provider and model, e.g. "openai:gpt-4o-mini".'
    )
    fallback: Names | None = Field(
        None, description="Provider refs tried in order when the model fails."
    )
    toolset: Names | None = Field(
        None, description="The tools it may use (not set: every registered tool)."
    )
    approval_mode: Literal["manual", "smart", "off"] | None = Field(
        None, description="Who decides commands that need approval: you, a second model, no one."
    )
    network: bool | None = Field(None, description="May its commands use the network?")
    fs_reach: FsReach | None = Field(None, description="Where its file tools may reach.")
    budget: PersonalityBudget | None = Field(
        None, description="Its own spending limits; the tightest limit that applies wins."
    )


def settings_schema() -> dict[str, Any]:
    """The form's JSON Schema (the model's own)."""
    return PersonalitySettings.model_json_schema()


def checked(values: dict[str, Any]) -> PersonalitySettings:
    """`values` as settings, or Invalid naming the first bad field."""
    try:
        return PersonalitySettings.model_validate(values, strict=True)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem.get("loc", ())) or "settings"
        raise Invalid(f"{where}: {problem.get('msg', 'invalid value')}") from None


def current_values(config: str) -> dict[str, Any]:
    """The keys a config.toml sets, as plain values (empty for an empty file)."""
    return _document(config).unwrap() if config.strip() else {}


def merged(config: str, edit: PersonalitySettings) -> str:
    """`config` with the edited keys set (or removed when null), comments kept."""
    doc = _document(config) if config.strip() else tomlkit.document()
    for key, value in edit.model_dump(exclude_unset=True).items():
        if key in TABLES and value is not None:
            _merge_table(doc, key, value)
        else:
            _put(doc, key, value)
    return tomlkit.dumps(doc)


# The keys that are tables: a form's values are merged key by key into them.
TABLES = ("fs_reach", "budget")


def _merge_table(doc: Any, name: str, values: dict[str, Any]) -> None:
    table = doc.get(name)
    if not isinstance(table, Table):
        table = tomlkit.table()
        _put(doc, name, table)
    for key, value in values.items():
        _put(table, key, value)
    if not table:
        _put(doc, name, None)


def _put(container: Any, key: str, value: Any) -> None:
    if value is None:
        if key in container:
            del container[key]
    else:
        container[key] = value


def _document(config: str) -> Any:
    try:
        return tomlkit.parse(config)
    except TOMLKitError as exc:
        raise Invalid(f"config.toml is not valid TOML ({exc}); fix the file first") from None


__all__ = [
    "SOUL_LIMIT",
    "FsReach",
    "PersonalityBudget",
    "PersonalitySettings",
    "checked",
    "current_values",
    "merged",
    "settings_schema",
]
