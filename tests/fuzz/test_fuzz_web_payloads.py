"""The web API's payload models and the OpenAI-compatible requests: any JSON body is a
validated payload or a `ValidationError` (a 422); any chat or responses body is a request
or a 400 naming a field, and its messages always become a transcript or a 400, never a
500."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from seam.apps.web.app import ApprovalAnswer, MemoryFiles, NewMessage, NewSession, PersonalityFiles
from seam.apps.web.errors import ApiError
from seam.apps.web.openai.chat_request import chat_request
from seam.apps.web.openai.messages import transcript_messages
from seam.apps.web.openai.responses_request import responses_request

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["role", "content", "text", "type", "name", "model", "messages"])
            | st.text(max_size=5),
            inner,
            max_size=4,
        )
    ),
    max_leaves=10,
)
MODELS: list[type[BaseModel]] = [
    NewSession,
    NewMessage,
    ApprovalAnswer,
    PersonalityFiles,
    MemoryFiles,
]
message = st.fixed_dictionaries(
    {},
    optional={
        "role": st.sampled_from(["user", "assistant", "system", "developer", "tool", "x"])
        | json_values,
        "content": json_values
        | st.lists(
            st.fixed_dictionaries({}, optional={"type": st.just("text"), "text": json_values})
            | json_values,
            max_size=3,
        ),
    },
)


@given(st.sampled_from(MODELS), json_values | st.dictionaries(st.text(max_size=10), json_values))
def test_any_json_body_validates_or_is_a_validation_error(
    model: type[BaseModel], body: Any
) -> None:
    with contextlib.suppress(ValidationError):
        model.model_validate(body)


@given(st.lists(message, min_size=1, max_size=5))
@example([{"role": "user", "content": [{"type": "text", "text": 5}]}])
@example([{"role": "user", "content": [{"type": "text", "text": None}]}])
def test_the_messages_of_any_chat_request_become_a_transcript_or_a_400(
    messages: list[dict[str, Any]],
) -> None:
    try:
        transcript = transcript_messages(messages)
    except ApiError as exc:
        assert exc.status == 400 and exc.message.startswith("messages[")
        return
    for item in transcript:
        assert item.role in ("system", "user", "assistant", "tool")
        assert isinstance(item.content, str)


@given(json_values | st.dictionaries(st.text(max_size=10), json_values))
@example({"model": "default", "messages": [{"role": "user", "content": "hi"}], "n": 2})
@example({"model": "default", "input": [{"type": "function_call_output"}]})
def test_any_openai_body_is_a_request_or_a_400(body: Any) -> None:
    for parse in (chat_request, responses_request):
        try:
            parse(body, frozenset({"echo"}))
        except ApiError as exc:
            assert exc.status == 400 and ": " in exc.message
