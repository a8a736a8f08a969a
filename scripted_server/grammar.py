"""Grammars a request may carry, read as each server reads them, and a small JSON-schema check
that keeps a scripted reply honest: a server that honours a grammar never writes outside it.

Where each server reads a JSON schema (checked in their sources):
- every dialect: OpenAI's `response_format: {"type": "json_schema", "json_schema": {"schema"}}`
  (llama-server `tools/server` → `json_schema`; vLLM `entrypoints/openai/protocol.py`;
  LM Studio; Ollama's `/v1` turns it into its `format`, `openai/openai.go`);
- llama-server also reads a top-level `json_schema`; vLLM the older `guided_json` and the
  newer `structured_outputs: {"json": ...}`.

`ScriptedServer.grammar` chooses what the server does with one: "honour" (the reply must fit,
else the server answers 500 so a wrong script is loud), "ignore" (a server that drops the
field), or "refuse" (400, as builds without JSON-schema support answer).
"""

from __future__ import annotations

from typing import Any, Literal

GrammarMode = Literal["honour", "ignore", "refuse"]

#: What older llama-server builds (and ik_llama.cpp) answered to a json_schema response format.
REFUSAL = {
    "error": {
        "code": 400,
        "message": 'response_format type must be one of "text" or "json_object", but got: '
        "json_schema",
        "type": "invalid_request_error",
    }
}


def schema_of(body: dict[str, Any], dialect: str) -> dict[str, Any] | None:
    """The JSON schema this dialect would constrain the reply to, or None."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        wrapper = response_format.get("json_schema")
        if isinstance(wrapper, dict) and isinstance(wrapper.get("schema"), dict):
            return wrapper["schema"]
    if dialect.startswith("llamacpp") and isinstance(body.get("json_schema"), dict):
        return body["json_schema"]
    if dialect == "vllm":
        if isinstance(body.get("guided_json"), dict):
            return body["guided_json"]
        outputs = body.get("structured_outputs")
        if isinstance(outputs, dict) and isinstance(outputs.get("json"), dict):
            return outputs["json"]
    return None


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def violation(schema: dict[str, Any], value: Any, where: str = "$") -> str | None:
    """Where `value` breaks `schema` (the subset tool schemas use), or None when it fits."""
    if "const" in schema and value != schema["const"]:
        return f"{where}: not {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is not one of {schema['enum']!r}"
    if "anyOf" in schema:
        if all(violation(option, value, where) for option in schema["anyOf"]):
            return f"{where}: fits none of anyOf"
        return None
    wanted = schema.get("type")
    if isinstance(wanted, str) and wanted in _TYPES:
        bad_bool = isinstance(value, bool) and wanted in ("integer", "number")
        if not isinstance(value, _TYPES[wanted]) or bad_bool:
            return f"{where}: not of type {wanted}"
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        for key in schema.get("required") or ():
            if key not in value:
                return f"{where}: {key} is required"
        for key, item in value.items():
            if key in properties:
                found = violation(properties[key], item, f"{where}.{key}")
                if found:
                    return found
            elif schema.get("additionalProperties") is False:
                return f"{where}: {key} is not allowed"
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for number, item in enumerate(value):
            found = violation(schema["items"], item, f"{where}[{number}]")
            if found:
                return found
    return None


def held_to(schema: dict[str, Any], reply: Any) -> Any:
    """The reply itself when its text fits the schema; else a 500 naming the misfit (a real
    server constrained by the schema could never have written it: the script is wrong)."""
    import json

    from scripted_server.script import Reply

    if reply.status is not None or reply.fault is not None:
        return reply  # a scripted fault plays as scripted
    try:
        value = json.loads(reply.text)
    except ValueError:
        found: str | None = "the text is not JSON"
    else:
        found = violation(schema, value)
    if found is None and not reply.tool_calls:
        return reply
    found = found or "tool calls instead of the constrained text"
    message = f"scripted server: the scripted reply breaks the request's grammar ({found})"
    return Reply(status=500, error_body={"error": {"message": message, "type": "script_error"}})
