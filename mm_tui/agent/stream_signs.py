"""What an event stream's raw bytes say about when to read it next (issue 16), looked for
in each block the lean transport reads, before any JSON is decoded.

- the model finished (a chunk's `finish_reason`, or `[DONE]`): the rest is read as it comes,
  so a call's end is not held back by the reader's pace;
- the model composes a tool call: the stream is read at least every `TOOL_CALL_PACE`, since
  the call's end starts its tool.
A sign cut between two reads is only missed: the pace then holds as before.
"""

from __future__ import annotations

import re

#: The model said it is done: a chunk's `finish_reason`, or the stream's `[DONE]`.
FINISHING = re.compile(rb'"finish_reason"\s*:\s*"|data:\s*\[DONE\]')
_NOT_FINISHED = b'"finish_reason":null'
#: Once the model composes a tool call (a chunk's `tool_calls` holds a fragment), the stream is
#: read at most this often whatever the client's pace: the call's end starts its tool, which
#: the person waits for (the window's own pace is 0.5 s).
TOOL_CALL_PACE = 0.1
TOOL_CALL = re.compile(rb'"tool_calls"\s*:\s*\[\s*\{')


def finishing(body: bytes) -> bool:
    """`FINISHING` found in `body`; the usual block (each `"finish_reason":null`, no `[DONE]`)
    told apart in C first (the pattern tries a match at every quote of a block's JSON)."""
    if b"[DONE]" not in body and body.count(b'"finish_reason"') == body.count(_NOT_FINISHED):
        return False
    return FINISHING.search(body) is not None


def composes_a_call(body: bytes) -> bool:
    """A chunk in `body` carries a fragment of a tool call (not an empty `tool_calls`)."""
    return b'"tool_calls"' in body and TOOL_CALL.search(body) is not None
