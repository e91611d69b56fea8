"""The web API's payload models and the OpenAI-compatible request's messages: any JSON
body is a validated payload or a `ValidationError` (a 422), and the messages of a valid
chat request always become a transcript, never a 500."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from seam.apps.web.app import ApprovalAnswer, MemoryFiles, NewMessage, NewSession, PersonalityFiles
from seam.apps.web.openai_compat import ChatRequest
from seam.apps.web.transcript import transcript_messages

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
    ChatRequest,
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
def test_the_messages_of_any_valid_chat_request_become_a_transcript(
    messages: list[dict[str, Any]],
) -> None:
    request = ChatRequest.model_validate({"model": "default", "messages": messages})
    for item in transcript_messages(request.messages):
        assert item.role in ("system", "user", "assistant")
        assert isinstance(item.content, str)
