"""What the endpoint does to the model's answer for the request: cut it at a `stop`
sequence, and hold it to a `response_format` (JSON, or JSON matching a schema).

`stop` is applied here, whatever the provider: the text the client gets ends before the
first stop sequence (a stream holds back only as many characters as could begin one), and
the finish reason is `stop`. The stored session keeps the model's whole reply.

`response_format` asks the model through its system prompt (the schema, verbatim) and
checks the answer: one JSON value (a single ```json fence around it is taken off), an
object for `json_object`, valid against the schema for `json_schema`. An answer that is
not is a 502 naming `response_format` (in a stream: an error event before `[DONE]`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from seam.apps.web.openai.messages import refuse


@dataclass(frozen=True, slots=True)
class AnswerFormat:
    """A JSON answer: any object (`schema` None) or one matching `schema`."""

    name: str
    schema: Mapping[str, Any] | None = None

    def note(self) -> str:
        """What the model is told in its system prompt."""
        if self.schema is None:
            return "Answer with one JSON object and nothing else: no prose, no code fence."
        schema = json.dumps(self.schema, ensure_ascii=False)
        return (
            f"Answer with one JSON value named {self.name!r} that is valid against this "
            f"JSON schema, and nothing else (no prose, no code fence):\n{schema}"
        )

    def check(self, text: str) -> str:
        """The answer as JSON text; ValueError says why it is not what was asked."""
        body = _unfenced(text)
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ValueError(f"the answer is not JSON ({exc.msg} at {exc.pos})") from None
        if self.schema is None:
            if not isinstance(value, dict):
                raise ValueError("the answer is not a JSON object")
            return body
        problem = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema).iter_errors(value)
        )
        if problem is not None:
            where = "/".join(str(p) for p in problem.absolute_path) or "the answer"
            raise ValueError(f"the answer does not match the schema at {where}: {problem.message}")
        return body


def answer_format(raw: Any, field: str = "response_format") -> AnswerFormat | None:
    """`{"type": "text" | "json_object" | "json_schema", ...}` (chat) or the Responses
    API's `text.format`, which puts the schema's fields beside `type`."""
    if raw is None:
        return None
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text":
        return None
    if kind == "json_object":
        return AnswerFormat("json_object")
    if kind == "json_schema":
        spec = raw.get("json_schema", raw)
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise refuse(f"{field}.json_schema.schema", "must be a JSON schema object")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise refuse(
                f"{field}.json_schema.schema", f"is not a valid schema: {exc.message}"
            ) from None
        return AnswerFormat(str(spec.get("name") or "answer"), schema)
    raise refuse(f"{field}.type", "must be 'text', 'json_object' or 'json_schema'")


def _unfenced(text: str) -> str:
    body = text.strip()
    if body.startswith("```") and body.endswith("```") and body.count("```") == 2:
        body = body[3:-3]
        body = body[4:] if body.startswith("json") else body
    return body.strip()


class StopCut:
    """Streamed text cut before the first stop sequence: `feed` returns what can be sent
    now, `end` the rest; `stopped` once a sequence was met (nothing more is sent)."""

    def __init__(self, stops: tuple[str, ...]) -> None:
        self.stops = stops
        self.held = ""
        self.stopped = False
        self._keep = max((len(s) for s in stops), default=1) - 1

    def feed(self, text: str) -> str:
        if self.stopped:
            return ""
        if not self.stops:
            return text
        self.held += text
        at = min((i for s in self.stops if (i := self.held.find(s)) >= 0), default=-1)
        if at >= 0:
            self.stopped = True
            out, self.held = self.held[:at], ""
            return out
        cut = max(len(self.held) - self._keep, 0)
        out, self.held = self.held[:cut], self.held[cut:]
        return out

    def end(self) -> str:
        out, self.held = ("" if self.stopped else self.held), ""
        return out


def cut(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    """The whole answer cut before its first stop sequence, and whether one was met."""
    cutter = StopCut(stops)
    out = cutter.feed(text) + cutter.end()
    return out, cutter.stopped


__all__ = ["AnswerFormat", "StopCut", "answer_format", "cut"]
