"""A tool call known whole at once, as the chunks of the streaming protocol.

The stream protocol (`seam.contracts.model`) describes a call in three steps, because most
providers stream its arguments piece by piece. The local model and the recovery of calls
written as text both have the whole call at once; they give it as one start, one delta
with all the arguments and one end, from here, so the two cannot disagree on the order.
"""

from __future__ import annotations

from seam.contracts.messages import ToolCall
from seam.contracts.model import ModelChunk, ToolCallDelta, ToolCallEnd, ToolCallStart


def whole_call(index: int, call: ToolCall) -> tuple[ModelChunk, ModelChunk, ModelChunk]:
    """The start, the full arguments and the end of `call` at stream position `index`."""
    return (
        ToolCallStart(index, call.id, call.name),
        ToolCallDelta(index, call.arguments),
        ToolCallEnd(index, call),
    )
