"""The by-hand entry point: `python -m scripted_server SCRIPT`, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from scripted_server import Reply, ScriptError, ToolCall, load_script

DEMO = Path(__file__).parents[2] / "scripted_server" / "examples" / "demo.yaml"


def start_cli(*arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "scripted_server", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )


def test_the_cli_prints_its_url_serves_the_script_and_stops_on_sigterm(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the file", "chunk_size": 3}]))
    process = start_cli(str(script), "--dialect", "llamacpp", "--model", "tiny")
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        with openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=10) as client:
            assert [model.id for model in client.models.list()] == ["tiny"]
            stream = client.chat.completions.create(model="tiny", messages=[], stream=True)
            chunks = list(stream)
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == (
            "from the file"
        )
        assert chunks[-1].choices == []  # the llamacpp dialect was chosen
    finally:
        process.terminate()
        _, error = process.communicate(timeout=10)  # also closes the pipes
    assert process.returncode == 0, error


def test_the_cli_refuses_a_bad_script_with_one_line_and_status_2(tmp_path):
    script = tmp_path / "bad.yaml"
    script.write_text("- text: hi\n  colour: blue\n")
    process = start_cli(str(script))
    _, error = process.communicate(timeout=30)
    assert process.returncode == 2
    assert error.strip() == (
        f"scripted server: {script}: reply 1: unknown reply key(s) colour; known: "
        "['chunk_size', 'delay', 'dialect', 'empty_deltas', 'error_body', 'fault', 'finish_reason', "
        "'headers', 'pause', 'pause_after', 'reasoning', 'stall', 'status', 'text', 'timings', 'tool_calls', 'usage']"
    )


def test_the_demo_script_is_a_markdown_answer_a_bash_call_then_an_answer():
    first, second, third = load_script(DEMO)
    assert "```python" in first.text and first.reasoning
    assert second.tool_calls == [ToolCall("bash", {"command": "ls"})]
    assert third.text and not third.tool_calls


def test_a_yaml_script_reads_tool_calls_and_every_reply_field(tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text(
        "- tool_calls: [{name: bash, arguments: {command: ls}, id: call_1}]\n"
        "  finish_reason: stop\n"
        "- {status: 429, error_body: {error: {message: slow down}}, stall: 0.5}\n"
        "- {text: cut, fault: no_done, dialect: ollama, delay: 0.1, chunk_size: 2}\n"
    )
    assert load_script(script) == [
        Reply(tool_calls=[ToolCall("bash", {"command": "ls"}, "call_1")], finish_reason="stop"),
        Reply(status=429, error_body={"error": {"message": "slow down"}}, stall=0.5),
        Reply(text="cut", fault="no_done", dialect="ollama", delay=0.1, chunk_size=2),
    ]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"fault": "explode"}, "unknown fault 'explode'"),
        ({"dialect": "gpt"}, "unknown dialect 'gpt'"),
        ({"tool_calls": [{"arguments": {}}]}, "a tool call needs at least a name"),
        ({"chunk_size": 0}, "chunk_size must be at least 1"),
    ],
)
def test_a_reply_that_cannot_be_played_is_refused_by_name(reply, message, tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([reply]))
    with pytest.raises(ScriptError, match=message):
        load_script(script)
