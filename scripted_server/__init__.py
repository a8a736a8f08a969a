"""A scripted OpenAI-compatible model server for tests, benchmarks and demos.

    from scripted_server import ScriptedServer, Reply, ToolCall

    with ScriptedServer(dialect="openai") as server:       # 127.0.0.1, any free port
        server.enqueue(Reply(text="Hello **world**"))
        server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "ls"})]))
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        ...
        server.requests                                     # every JSON body, in order
        server.wait_for_requests(2, timeout=5.0)           # TimeoutError if they never come

Dialects (`openai`, `ollama`, `llamacpp`, `llamacpp_legacy`, `lmstudio`, `vllm`): see wire.py,
which says what was checked against each real server. An empty queue answers
`[scripted server: script exhausted]`. Side endpoints: GET /v1/models (`server.models`),
GET /props (`server.n_ctx`), POST /api/show (`server.ollama_ctx`, `server.ollama_num_ctx`),
GET /api/version (ollama), POST /tokenize (llamacpp, vllm) — see side_routes.py; their requests
land in `server.other_requests` as (method, path, body). A grammar in a chat request
(`response_format` json_schema, and each dialect's own fields) is honoured, ignored or refused
as `server.grammar` says (grammar.py); `server.grammars` keeps the schema each request honoured.

What the `openai` client (3.x, httpx2) does with each fault, as the tests in
tests/scripted_server/test_scripted_faults.py prove (stream iterated with `for chunk in ...`):

| Reply(...)                    | what the client does                                          |
|-------------------------------|---------------------------------------------------------------|
| fault="no_done"               | nothing: the stream just ends after some text, no chunk has a |
|                               | finish_reason and no [DONE] came. Only the missing            |
|                               | finish_reason tells the agent it was cut.                     |
| fault="error_event"           | raises `openai.APIError` (the base class itself, no status    |
|                               | code) after some text; `.message` is the event's message,     |
|                               | `.body` the event's `error` object.                           |
| fault="malformed_chunk"       | raises a bare `json.JSONDecodeError` (NOT an OpenAIError)     |
|                               | after some text: catch ValueError too.                        |
| fault="disconnect"            | raises `openai.APIConnectionError` after some text (the body  |
|                               | ends without its closing chunk).                              |
| stall > client timeout        | raises `openai.APITimeoutError` (a subclass of                |
|                               | APIConnectionError) before any chunk.                         |
| status=401                    | `openai.AuthenticationError`, at `create()`                   |
| status=400 + error_body       | `openai.BadRequestError`; `.message` is                       |
|                               | "Error code: 400 - <error.message>", `.body` the error object |
| status=404 + error_body       | `openai.NotFoundError` (same message shape)                   |
| status=429                    | `openai.RateLimitError`                                       |
| status=500, 503               | `openai.InternalServerError`                                  |
| disconnect/no_done, no stream | `openai.APIConnectionError` at `create()`                     |

Beware the client's own retries (`max_retries`, default 2): it retries 408/409/429/5xx,
timeouts and connection errors, and each retry plays the NEXT reply of the queue. Build clients
with `max_retries=0` unless the retry is what you test; `headers={"retry-after-ms": "1"}` on a
Reply makes a retry immediate.
"""

from __future__ import annotations

from scripted_server.script import (
    DIALECTS,
    FAULTS,
    Reply,
    ScriptError,
    ToolCall,
    load_script,
)
from scripted_server.server import SCRIPT_EXHAUSTED_TEXT, ScriptedServer

__all__ = [
    "DIALECTS",
    "FAULTS",
    "SCRIPT_EXHAUSTED_TEXT",
    "Reply",
    "ScriptError",
    "ScriptedServer",
    "ToolCall",
    "load_script",
]
