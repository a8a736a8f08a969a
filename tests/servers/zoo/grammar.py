"""Structured output in the zoo: an emulator whose real server constrains generation to a JSON
schema holds each scripted reply to the schema it read from the request, as that server reads
it (each emulator's `schema_read` follows its own source). A server so constrained can only
write JSON that fits: a scripted reply that does not is a wrong script, so it is recorded in
`misfits` and answered with a line no client reads as a call (tests assert `misfits == []`).

Emulators of servers that read no schema from an OpenAI request (mlx_lm.server,
text-generation-webui, llamafile's default server, KoboldCpp 1.76) stay plain `Emulator`s: they
play the scripted reply as the model wrote it, whatever the request asked.
"""

from __future__ import annotations

import json
from typing import Any

from scripted_server import Reply
from scripted_server.grammar import violation
from tests.servers.zoo.base import Emulator, Turn

#: What `format: "json"` (Ollama) and `json_object` (the others) hold a reply to: any object.
ANY_OBJECT: dict[str, Any] = {"type": "object"}


def openai_schema(request: dict[str, Any]) -> dict[str, Any] | None:
    """`response_format: {"type": "json_schema", "json_schema": {"schema": ...}}`, the shape
    every server here that reads one reads; `json_object` holds the reply to an object."""
    response_format = request.get("response_format")
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        schema = response_format.get("schema")
        return schema if isinstance(schema, dict) else ANY_OBJECT
    if kind == "json_schema":
        wrapper = response_format.get("json_schema")
        schema = wrapper.get("schema") if isinstance(wrapper, dict) else None
        return schema if isinstance(schema, dict) else ANY_OBJECT
    return None


class Constrained(Emulator):
    """An emulator whose server honours a JSON schema in the request."""

    def __init__(self) -> None:
        super().__init__()
        #: Per chat request, the schema the server held the reply to (None: none).
        self.schemas: list[dict[str, Any] | None] = []
        #: Scripted replies that broke the schema they were held to (a wrong script).
        self.misfits: list[str] = []

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        """The schema this server constrains generation to, read as it reads the request."""
        return openai_schema(request)

    def take_turn(self, body: dict[str, Any]) -> tuple[Reply, Turn]:
        reply, turn = super().take_turn(body)
        schema = self.schema_read(body)
        with self.lock:
            self.schemas.append(schema)
        if schema is None:
            return reply, turn
        misfit = "tool calls where only text can be written" if reply.tool_calls else None
        try:
            misfit = misfit or violation(schema, json.loads(reply.text))
        except ValueError:
            misfit = "the text is not JSON"
        if misfit is None:
            return reply, turn
        with self.lock:
            self.misfits.append(misfit)
        return Reply(text=f"[zoo: the scripted reply breaks the grammar: {misfit}]"), turn
