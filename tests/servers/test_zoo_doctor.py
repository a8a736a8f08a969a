"""`mm-tui doctor` against every server of the zoo: the context window it reads before a turn
(llama-server's and llamafile's `/props`, Ollama's `/api/show` and `/api/ps`) and the
context each server says it loaded the model with (Ollama `/api/ps` once the probe loaded it,
vLLM's and SGLang's `max_model_len`, LM Studio's `loaded_context_length`, KoboldCpp's
`true_max_context_length`) -- or that it does not say. A server that answers an unknown
endpoint with 200 and an error (LM Studio) is not taken for Ollama."""

from __future__ import annotations

import io
from pathlib import Path

from mm_tui.agent.config import Config
from mm_tui.agent.context import discover_context_window
from mm_tui.doctor import print_findings, run_checks
from scripted_server import Reply, ToolCall
from tests.servers.zoo import Emulator

NOT_SAID = "context served: the server does not say"
#: Per server: the context window line, and what it says it serves ({model} filled in).
EXPECTED = {
    "llama-server": ("16384 tokens (llama-server /props)", NOT_SAID),
    "ollama": (
        "4096 tokens (ollama default until the model is loaded)",
        "context served: {model} is loaded with 16384 tokens (ollama /api/ps)",
    ),
    "vllm": ("8192 tokens (default)",
             "context served: {model} is loaded with 16384 tokens (vllm max_model_len)"),
    "sglang": ("8192 tokens (default)",
               "context served: {model} is loaded with 32768 tokens (sglang max_model_len)"),
    "mlx_lm.server": ("8192 tokens (default)", NOT_SAID),
    "lm-studio": ("8192 tokens (default)", "context served: {model} is loaded with 16384 tokens "
                  "(lm studio loaded_context_length)"),
    "koboldcpp": ("8192 tokens (default)", "context served: {model} is loaded with 16384 tokens "
                  "(koboldcpp true_max_context_length)"),
    "koboldcpp-1.76": ("8192 tokens (default)", "context served: {model} is loaded with 16384 "
                       "tokens (koboldcpp true_max_context_length)"),
    "localai": ("8192 tokens (default)", NOT_SAID),
    "llamafile": ("8192 tokens (llama-server /props)", NOT_SAID),
    "text-generation-webui": ("8192 tokens (default)", NOT_SAID),
}  # fmt: skip


def script_the_probes(emulator: Emulator) -> None:
    """What a model answers to the doctor's two probes: the dummy tool, then some numbers."""
    if emulator.native_tools:
        probe = Reply(tool_calls=[ToolCall("report_check", {"word": "ready"})])
    else:
        probe = Reply(text='<tool_call>\n{"name": "report_check", "arguments": '
                      '{"word": "ready"}}\n</tool_call>')  # fmt: skip
    emulator.enqueue(probe, Reply(text="\n".join(str(n) for n in range(1, 41))))


def doctor(emulator: Emulator, cwd: Path) -> str:
    """What `mm-tui doctor --base-url … --model …` prints, run in this process."""
    config = Config(base_url=emulator.base_url, model=emulator.model, lsp_servers=())
    out = io.StringIO()
    print_findings(run_checks(config, cwd, env={}, which=lambda _name: None), out)
    return out.getvalue()


def test_the_doctor_reads_the_context_each_server_says(emulator: Emulator, tmp_path: Path) -> None:
    script_the_probes(emulator)

    stdout = doctor(emulator, tmp_path)

    lines = stdout.splitlines()
    window, served = EXPECTED[emulator.name]
    [context] = [line for line in lines if line[2:].startswith("context window")]
    assert context[2:].startswith(f"context window {window}"), stdout
    [said] = [line[2:] for line in lines if line[2:].startswith("context served")]
    assert said == served.format(model=emulator.model), stdout
    assert f"✓ server {emulator.base_url} answers (1 model(s))" in lines, stdout
    assert f"✓ model {emulator.model}" in lines, stdout
    expected_tools = "tool calls: native" if emulator.native_tools else "wrote the probe call as"
    assert any(expected_tools in line for line in lines), stdout
    assert len(emulator.requests) == 2  # the two probes, nothing else


def test_ollama_says_the_context_it_loaded_the_model_with(tmp_path: Path) -> None:
    """Once a request loaded the model, the window is the one Ollama runs it with
    (OLLAMA_CONTEXT_LENGTH), not its default."""
    from tests.servers.zoo.ollama import Ollama

    with Ollama() as ollama:
        before = discover_context_window(ollama.base_url, ollama.model)
        assert (before.tokens, before.source, before.pending) == (4096, "ollama default", True)
        assert before.note == ""  # a default not confirmed is never warned about
        script_the_probes(ollama)
        doctor(ollama, tmp_path)

        after = discover_context_window(ollama.base_url, ollama.model)

    assert (after.tokens, after.source, after.note) == (16384, "ollama /api/ps", "")


def test_the_doctor_says_when_ollama_loaded_the_model_with_a_small_context(tmp_path: Path) -> None:
    """Before the probe Ollama's context is an unconfirmed default, said as such; after it,
    a small context it confirms is a warning with its fix."""
    from tests.servers.zoo.ollama import Ollama

    with Ollama() as ollama:
        ollama.context = 4096
        script_the_probes(ollama)
        lines = doctor(ollama, tmp_path).splitlines()

    assert "✓ context window 4096 tokens (ollama default until the model is loaded)" in lines
    assert (
        "! Ollama runs qwen2.5-coder:14b with 4096 tokens of context (the model supports 32768) "
        "— raise it with OLLAMA_CONTEXT_LENGTH or num_ctx, then set contextWindow"
    ) in lines, lines
