"""Each server's own error answers: an unknown model (Ollama's OpenAI-shaped 404, vLLM's
`NotFoundError`, LM Studio's plain-string error) and a prompt over the context (llama-server's
`exceed_context_size_error`, vLLM's and SGLang's `BadRequestError`) each end the turn with one
line that carries the server's own words, the history valid, nothing retried."""

from __future__ import annotations

import pytest

from mm_tui.agent.events import Notice
from tests.agent.conftest import AgentFactory, assert_valid_history
from tests.servers.zoo import Emulator
from tests.servers.zoo.llama_server import LlamaServer
from tests.servers.zoo.lmstudio import LmStudio
from tests.servers.zoo.ollama import Ollama
from tests.servers.zoo.sglang import Sglang
from tests.servers.zoo.vllm import Vllm

UNKNOWN_MODEL = [
    (Ollama, 'model "nope" not found, try pulling it first'),
    (Vllm, "The model `nope` does not exist."),
    (LmStudio, 'Model "nope" not found. Please specify a valid model.'),
]
TOO_LONG = [
    (LlamaServer, "the request exceeds the available context size, try increasing it"),
    (Vllm, "This model's maximum context length is 16384 tokens."),
    (Sglang, "is longer than the model's context length (32768 tokens)."),
]


def one_error_line(make_agent: AgentFactory, emulator: Emulator, model: str, prompt: str) -> str:
    agent, events = make_agent(base_url=emulator.base_url, model=model)
    ended = agent.run_turn(prompt)
    assert ended.reason == "error", ended
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert_valid_history(agent.messages)
    assert len(emulator.requests) == 1  # a 4xx is not retried
    return errors[0]


@pytest.mark.parametrize(("server", "words"), UNKNOWN_MODEL, ids=lambda v: getattr(v, "name", ""))
def test_an_unknown_model_is_said_in_the_servers_words(
    server: type[Emulator], words: str, make_agent: AgentFactory
) -> None:
    with server() as emulator:
        line = one_error_line(make_agent, emulator, "nope", "hi")
    assert f"has no model 'nope' (HTTP 404: {words})" in line, line


@pytest.mark.parametrize(("server", "words"), TOO_LONG, ids=lambda v: getattr(v, "name", ""))
def test_a_prompt_over_the_context_is_said_in_the_servers_words(
    server: type[Emulator], words: str, make_agent: AgentFactory
) -> None:
    with server() as emulator:
        line = one_error_line(make_agent, emulator, emulator.model, "lorem ipsum " * 15000)
    assert "(HTTP 400: " in line and words in line, line
