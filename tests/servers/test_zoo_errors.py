"""Each server's own error answers, through `mm-tui -p`: an unknown model (Ollama's OpenAI-shaped
404, vLLM's `NotFoundError`, LM Studio's plain-string error) and a prompt over the context
(llama-server's `exceed_context_size_error`, vLLM's and SGLang's `BadRequestError`) each end
the turn with one line that carries the server's own words, exit 1, and no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.faces.helpers import clean_env
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


def run_p(base_url: str, model: str, home: Path, piped: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "-p", "summarize", "--base-url", base_url,
         "--model", model],
        input=piped, cwd=home, env=clean_env(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("[error] ")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    return errors[0]


@pytest.mark.parametrize(("server", "words"), UNKNOWN_MODEL, ids=lambda v: getattr(v, "name", ""))
def test_an_unknown_model_is_said_in_the_servers_words(
    server: type, words: str, tmp_path: Path
) -> None:
    with server() as emulator:
        line = one_error_line(run_p(emulator.base_url, "nope", tmp_path))
    assert f"has no model 'nope' (HTTP 404: {words})" in line, line


@pytest.mark.parametrize(("server", "words"), TOO_LONG, ids=lambda v: getattr(v, "name", ""))
def test_a_prompt_over_the_context_is_said_in_the_servers_words(
    server: type, words: str, tmp_path: Path
) -> None:
    with server() as emulator:
        line = one_error_line(run_p(emulator.base_url, emulator.model, tmp_path,
                                    piped="lorem ipsum " * 15000))  # fmt: skip
        assert len(emulator.requests) == 1  # a 400 is not retried
    assert "(HTTP 400: " in line and words in line, line
