"""The constrained retry against every server of the zoo: a reply holds a call no repair reads,
so the same request goes to the same server once more with the call's schema as a grammar.
Where the server holds the model to a JSON schema (read in its source; the table below is
written out, not read back from the emulators) the call then runs, badged, and the user is
told; where it drops the schema the model answers freely, the model is told what failed in
the tool's own words, and the server is not asked again; where it refuses the schema (an
old llama-server: 500) it is remembered; where its version cannot read one (Ollama before
0.5.0) it is never asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.constrained_retry import BADGE_CONSTRAINED
from mm_tui.agent.events import Notice, ToolFinished, ToolStarted
from scripted_server import Reply, ToolCall
from tests.agent.conftest import AgentFactory, Recorder, assert_valid_history
from tests.servers.zoo import Emulator
from tests.servers.zoo.grammar import Constrained
from tests.servers.zoo.llama_server import LlamaServer, LlamaServer2024
from tests.servers.zoo.ollama import Ollama, Ollama047

#: name: what the server does with `response_format: {"type": "json_schema", ...}` on its
#: OpenAI chat endpoint (each emulator's docstring cites the source that says so).
STRUCTURED_OUTPUT = {
    "llama-server": "grammar",  # server-common.cpp: json_schema -> grammar
    "ollama": "grammar",  # openai.go: -> native `format` since 0.5.0
    "vllm": "grammar",  # structured outputs
    "sglang": "grammar",  # sampling param `json_schema`
    "lm-studio": "grammar",  # documented structured output
    "koboldcpp": "grammar",  # 1.113: convert_json_to_gbnf
    "localai": "grammar",  # chat.go: response format -> grammar
    "mlx_lm.server": "dropped",
    "text-generation-webui": "dropped",  # only its own `grammar_string`
    "llamafile": "dropped",  # only a GBNF `grammar`
    "koboldcpp-1.76": "dropped",  # only a GBNF `grammar`
}

UNREADABLE = '{"text" "hi" :: ]]'  # no repair reads it
#: The same call written in the text, for servers that drop `tools` (Hermes/Qwen markup).
WRITTEN = '<tool_call>\n{"name": "echo", "arguments": ' + json.dumps(UNREADABLE) + "}\n</tool_call>"
FITTING = json.dumps({"name": "echo", "arguments": {"text": "hi"}})
FREE = "Sorry -- here it is again: echo hi"  # what a model writes when nothing holds it
TOLD = "the arguments of echo are not valid JSON"  # the tool's own words to the model


def broken(emulator: Emulator) -> Reply:
    if emulator.native_tools:
        return Reply(tool_calls=[ToolCall("echo", UNREADABLE)])
    return Reply(text="Let me echo it.\n" + WRITTEN)


def schema_sent(request: dict[str, Any]) -> dict[str, Any] | None:
    response_format = request.get("response_format") or {}
    if response_format.get("type") != "json_schema":
        return None
    return (response_format.get("json_schema") or {}).get("schema")


def notices(recorder: Recorder) -> list[str]:
    return [n.text for n in recorder.of(Notice)]


def test_the_zoo_table_covers_every_server(emulator: Emulator) -> None:
    request = {"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}
    reads = isinstance(emulator, Constrained) and emulator.schema_read(request) is not None
    assert reads == (STRUCTURED_OUTPUT[emulator.name] == "grammar"), emulator.name


def test_an_unreadable_call_is_asked_again_as_the_server_takes_a_schema(
    emulator: Emulator, make_agent: AgentFactory
) -> None:
    honours = STRUCTURED_OUTPUT[emulator.name] == "grammar"
    if honours:  # the call, the grammar-held retry, the answer
        emulator.enqueue(broken(emulator), Reply(text=FITTING), Reply(text="Echoed."))
    else:  # the call, the retry answered freely, the call again (no retry), the answer
        emulator.enqueue(broken(emulator), Reply(text=FREE), broken(emulator), Reply("Done."))
    agent, recorder = make_agent(base_url=emulator.base_url, model=emulator.model)

    ended = agent.run_turn("echo hi")

    assert ended.reason == "answered", (ended, notices(recorder))
    assert_valid_history(agent.messages)
    requests = emulator.requests
    retry = requests[1]
    schema = schema_sent(retry)
    assert schema is not None, retry.keys()
    assert schema["properties"]["name"]["enum"] == ["echo"]
    assert "tools" not in retry and "# Tools" in retry["messages"][0]["content"]
    outputs = [finished.output for finished in recorder.of(ToolFinished)]
    if honours:
        assert isinstance(emulator, Constrained)
        assert emulator.misfits == []
        assert emulator.schemas[1] == schema  # the server held the model to it
        if emulator.name == "ollama":
            assert emulator.formats[1] == schema  # as the native `format`
        assert [schema_sent(r) is not None for r in requests] == [False, True, False]
        assert outputs[0] == "hi"
        started = recorder.of(ToolStarted)
        assert BADGE_CONSTRAINED in started[0].badge
        assert any("asked again with its schema" in text for text in notices(recorder))
        call = next(m for m in agent.messages if m.get("tool_calls"))["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"text": "hi"}
    else:
        # asked once; the free answer shows the server dropped the schema: never again
        assert [schema_sent(r) is not None for r in requests] == [False, True, False, False]
        assert len(outputs) == 2 and all(TOLD in output for output in outputs), outputs
        assert all(BADGE_CONSTRAINED not in s.badge for s in recorder.of(ToolStarted))
        said = notices(recorder)
        assert sum("ignored a JSON-schema grammar" in text for text in said) == 1, said
    assert all("response_format" not in r for r in requests[2:])  # only the retry had one


def test_an_old_llama_server_refusing_the_schema_is_remembered(make_agent: AgentFactory) -> None:
    """Its 500 names the field: not a fault to retry, a server without the feature."""
    with LlamaServer2024() as emulator:
        emulator.enqueue(broken(emulator), broken(emulator), Reply(text="Gave up."))
        agent, recorder = make_agent(base_url=emulator.base_url, model=emulator.model)
        ended = agent.run_turn("echo hi")
        requests = emulator.requests
    assert ended.reason == "answered", notices(recorder)
    assert_valid_history(agent.messages)
    # the call, the refused retry, the call again (not retried), the answer
    assert [schema_sent(r) is not None for r in requests] == [False, True, False, False]
    outputs = [finished.output for finished in recorder.of(ToolFinished)]
    assert len(outputs) == 2 and all(TOLD in output for output in outputs), outputs
    refused = [text for text in notices(recorder) if "refused a JSON-schema grammar" in text]
    assert len(refused) == 1 and "response_format type must be one of" in refused[0], refused


def test_an_ollama_before_structured_outputs_is_never_asked(make_agent: AgentFactory) -> None:
    with Ollama047() as emulator:
        emulator.enqueue(broken(emulator), Reply(text="Gave up."))
        agent, recorder = make_agent(base_url=emulator.base_url, model=emulator.model)
        ended = agent.run_turn("echo hi")
        requests = emulator.requests
    assert ended.reason == "answered", notices(recorder)
    assert len(requests) == 2 and all(schema_sent(r) is None for r in requests)
    assert emulator.formats == [None, None]
    assert ("GET", "/api/version") in emulator.other_requests
    [output] = [finished.output for finished in recorder.of(ToolFinished)]
    assert TOLD in output


#: What the real llama-server (b10434, bench/real_model.py's prebuilt one) answered, byte for
#: byte but for key order: (request fields beside `messages`, status, body).
LLAMA_SERVER_REFUSALS = [
    ({"response_format": {"type": "foo"}}, 400, {"error": {"code": 400, "message":
     'response_format type must be one of "text" or "json_object", but got: foo',
     "type": "invalid_request_error"}}),
    ({"grammar": 'root ::= "x"', "tools": [{"type": "function", "function": {"name": "bash"}}]},
     400, {"error": {"code": 400, "message": "Cannot use custom grammar constraints with tools.",
     "type": "invalid_request_error"}}),
]  # fmt: skip


@pytest.mark.parametrize(("fields", "status", "body"), LLAMA_SERVER_REFUSALS)
def test_the_emulated_llama_server_refuses_as_the_real_one(
    fields: dict[str, Any], status: int, body: dict[str, Any]
) -> None:
    import urllib.error
    import urllib.request

    with LlamaServer() as emulator:
        data = json.dumps({"messages": [{"role": "user", "content": "hi"}], **fields}).encode()
        request = urllib.request.Request(
            emulator.base_url + "/chat/completions", data, {"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == status
    assert json.loads(refused.value.read()) == body


@pytest.mark.anyio
@pytest.mark.parametrize("server", [LlamaServer, Ollama], ids=lambda s: s.name)
async def test_the_windows_row_says_the_grammar_wrote_the_call(
    server: type[Emulator], tmp_path: Path
) -> None:
    """The row of the call the grammar wrote carries its badge; the file was read."""
    from mm_tui.agent.agent import Agent
    from mm_tui.agent.config import Config
    from mm_tui.app import MMApp
    from mm_tui.widgets.tool_row import ToolRow
    from tests.servers.scenario import ANSWER, QUESTION, make_project
    from tests.window.conftest import send, wait_for
    from tests.window.test_window_conversation import answers, turn_over

    project = make_project(tmp_path)
    agents: list[Agent] = []
    with server() as emulator:
        wrote = json.dumps({"name": "read_file", "arguments": {"path": "notes.txt"}})
        emulator.enqueue(Reply(tool_calls=[ToolCall("read_file", '{"path" "notes.txt" :: ]]')]),
                         Reply(text=wrote), Reply(text=ANSWER))  # fmt: skip
        config = Config(base_url=emulator.base_url, model=emulator.model, lsp_servers=(),
                        permissions="allow")  # fmt: skip

        def factory(sink: Any) -> Agent:
            agents.append(Agent(config, sink, project, retry_delays=()))
            return agents[-1]

        app = MMApp(config, project, agent_factory=factory, history_path=tmp_path / "h.jsonl")
        try:
            async with app.run_test(size=(120, 40)) as pilot:
                await send(pilot, QUESTION)
                await wait_for(pilot, turn_over(app), "the turn ends")
                [row] = app.query(ToolRow)
                line = row.render().plain
                assert answers(app)[-1] == ANSWER
        finally:
            for agent in agents:
                agent.close()
    assert "read_file notes.txt  ✓ done" in line, line
    assert line.endswith(f"⚕ {BADGE_CONSTRAINED}"), line
    assert "the answer is 42" in emulator.requests[2]["messages"][-1]["content"]
