"""The scripted server reads a grammar as each dialect does (honoured, ignored or refused), says
what it is the way each real server does (`owned_by`, Ollama's `/api/version`), and counts
tokens on `/tokenize` where llama-server and vLLM offer it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from scripted_server import Reply, ScriptedServer
from scripted_server.grammar import violation

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "enum": ["echo"]}, "arguments": {"type": "object"}},
    "required": ["name", "arguments"],
    "additionalProperties": False,
}
FORMAT = {"type": "json_schema", "json_schema": {"name": "call", "schema": SCHEMA}}


def http(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, None


def ask(server: ScriptedServer, **extra: Any) -> str:
    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    reply = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], extra_body=extra
    )
    return reply.choices[0].message.content or ""


def test_an_honoured_grammar_is_recorded_and_a_fitting_reply_plays(model_server) -> None:
    model_server.enqueue(Reply(text='{"name": "echo", "arguments": {}}'))
    assert json.loads(ask(model_server, response_format=FORMAT))["name"] == "echo"
    assert model_server.grammars == [SCHEMA]


def test_a_reply_outside_an_honoured_grammar_fails_loudly(model_server) -> None:
    model_server.enqueue(Reply(text="not json at all"))
    with pytest.raises(openai.InternalServerError, match="breaks the request's grammar"):
        ask(model_server, response_format=FORMAT)


def test_a_refused_grammar_is_a_400_and_plays_no_reply(model_server) -> None:
    model_server.grammar = "refuse"
    model_server.enqueue(Reply(text="kept"))
    with pytest.raises(openai.BadRequestError, match="json_schema"):
        ask(model_server, response_format=FORMAT)
    assert ask(model_server) == "kept"


def test_each_dialect_reads_its_own_fields(scripted_server_factory) -> None:
    vllm = scripted_server_factory("vllm")
    vllm.enqueue(Reply(text='{"name": "echo", "arguments": {}}'))
    ask(vllm, guided_json=SCHEMA)
    assert vllm.grammars == [SCHEMA]
    openai_like = scripted_server_factory("openai")
    openai_like.enqueue(Reply(text="free text"))
    assert ask(openai_like, guided_json=SCHEMA) == "free text"  # not its field: ignored
    assert openai_like.grammars == [None]


@pytest.mark.parametrize(
    ("dialect", "owned_by"),
    [("llamacpp", "llamacpp"), ("vllm", "vllm"), ("lmstudio", "organization_owner")],
)
def test_the_model_list_says_who_serves_it(scripted_server_factory, dialect, owned_by) -> None:
    server = scripted_server_factory(dialect)
    _, listing = http(f"{server.base_url}/models")
    assert {item["owned_by"] for item in listing["data"]} == {owned_by}


def test_ollama_says_its_version_and_others_do_not(scripted_server_factory) -> None:
    ollama = scripted_server_factory("ollama")
    assert http(f"{ollama.root_url}/api/version") == (200, {"version": "0.12.3"})
    other = scripted_server_factory("llamacpp")
    assert http(f"{other.root_url}/api/version")[0] == 404


def test_tokenize_counts_as_llama_server_and_vllm_answer(scripted_server_factory) -> None:
    llama = scripted_server_factory("llamacpp")
    _, answer = http(f"{llama.root_url}/tokenize", {"content": "abcdefg"})
    assert len(answer["tokens"]) == 3
    vllm = scripted_server_factory("vllm")
    _, answer = http(f"{vllm.root_url}/tokenize", {"model": "m", "prompt": "abc"})
    assert answer["count"] == 1
    ollama = scripted_server_factory("ollama")
    assert http(f"{ollama.root_url}/tokenize", {"content": "x"})[0] == 404


def test_the_schema_check_reads_what_tool_schemas_use() -> None:
    assert violation(SCHEMA, {"name": "echo", "arguments": {}}) is None
    assert violation(SCHEMA, {"name": "bash", "arguments": {}}) is not None
    assert violation(SCHEMA, {"name": "echo"}) is not None
    assert violation(SCHEMA, {"name": "echo", "arguments": {}, "x": 1}) is not None
    assert violation({"anyOf": [SCHEMA, {"type": "string"}]}, "s") is None
