"""`mm-tui doctor` as a person runs it: one line per check, a fix to run, non-zero on a problem."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.server_check import check_server, check_tools, start_command
from mm_tui.agent.server_probe import served_context
from mm_tui.doctor import config_findings, language_server_findings, print_findings
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.test_cli import mm


class _OllamaHandler(BaseHTTPRequestHandler):
    """Ollama's answers where the scripted server has none: `/api/version`, `capabilities`."""

    models: list[str] = []
    capabilities: list[str] = ["completion"]

    loaded_context: int | None = None

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path == "/api/ps" and self.loaded_context is not None:
            loaded = {"name": self.models[0], "model": self.models[0]}
            self._json({"models": [{**loaded, "context_length": self.loaded_context}]})
        elif self.path == "/v1/models":
            self._json({"object": "list", "data": [{"id": m} for m in self.models]})
        elif self.path == "/api/version":
            self._json({"version": "0.12.0"})
        else:
            self._json({"error": "not found"}, 404)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/api/show":
            self._json({"capabilities": self.capabilities, "parameters": "num_ctx 16384"})
        else:
            self._json({"error": "not found"}, 404)

    def _json(self, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@pytest.fixture
def ollama() -> Iterator[tuple[str, type[_OllamaHandler]]]:
    handler = type("Handler", (_OllamaHandler,), {"models": [], "capabilities": ["completion"]})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1", handler
    server.shutdown()
    server.server_close()


def test_doctor_says_server_model_context_and_tools_and_exits_zero(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.n_ctx = 16384
    done = mm("doctor", "--no-probe", "--base-url", model_server.base_url, cwd=tmp_path)

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[:4] == [
        f"✓ server {model_server.base_url} answers (1 model(s))",
        "✓ model scripted-model (the first the server lists; choose with --model or /model)",
        "✓ context window 16384 tokens (llama-server /props)",
        "✓ tool calls: checked on the first turn (text mode if the server refuses them)",
    ]
    assert "✓ no config file (defaults, environment and flags)" in lines
    assert any(line.startswith(("✓ language server", "! language server")) for line in lines)


def test_doctor_with_the_server_down_gives_the_command_to_start_it_and_fails(
    tmp_path: Path,
) -> None:
    done = mm("doctor", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path)

    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("✗ no model server answers at http://127.0.0.1:9/v1 (")
    assert lines[1] == "    run: llama-server -m MODEL.gguf --jinja --port 9"


def test_doctor_names_a_missing_model_and_reads_the_config_file(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    (tmp_path / ".mm.yaml").write_text(f"baseURL: {model_server.base_url}\nmodel: qwen3:8b\n")
    assert mm("trust", cwd=tmp_path).returncode == 0  # a project's baseURL needs trust

    done = mm("doctor", cwd=tmp_path)

    assert done.returncode == 1
    assert "✗ the server has no model qwen3:8b (it has: scripted-model)" in done.stdout
    assert f"✓ config {tmp_path / '.mm.yaml'} (used)" in done.stdout


def test_a_server_that_is_not_openai_compatible_is_said_so(model_server: ScriptedServer) -> None:
    url = f"{model_server.root_url}/nothing-here"
    report = check_server(Config(base_url=url))

    assert not report.reachable
    assert report.findings[0].text == (
        f"the server at {url} is not OpenAI-compatible (GET /models: HTTP 404) — "
        "the base URL usually ends in /v1"
    )


def test_ollama_with_no_model_pulled_says_the_pull_to_run(
    tmp_path: Path, ollama: tuple[str, type[_OllamaHandler]]
) -> None:
    url, _handler = ollama
    done = mm("doctor", "--base-url", url, cwd=tmp_path)

    assert done.returncode == 1
    assert "✗ Ollama has no model pulled\n    run: ollama pull qwen2.5-coder:14b\n" in done.stdout


def test_ollama_says_whether_the_model_calls_tools(
    ollama: tuple[str, type[_OllamaHandler]],
) -> None:
    url, handler = ollama
    handler.models = ["gemma3:12b"]
    report = check_server(Config(base_url=url, model="gemma3:12b"))
    assert report.ollama and report.model == "gemma3:12b"

    no_tools = check_tools(Config(base_url=url), "gemma3:12b")
    handler.capabilities = ["completion", "tools"]
    with_tools = check_tools(Config(base_url=url), "gemma3:12b")

    assert (no_tools.level, no_tools.text) == (
        "warning",
        "tool calls: gemma3:12b has no native tool calls — tools are described in the prompt",
    )
    assert with_tools.text == "tool calls: native (the server says gemma3:12b supports tools)"


def test_start_commands_follow_the_usual_ports() -> None:
    assert start_command("http://localhost:11434/v1") == "ollama serve"
    assert start_command("http://localhost:1234/v1") == "lms server start"
    assert (
        start_command("http://localhost:8080/v1")
        == "llama-server -m MODEL.gguf --jinja --port 8080"
    )


def test_language_servers_on_the_path_are_found_and_missing_ones_said() -> None:
    from mm_tui.lsp.spec import LspServerSpec

    specs = (
        LspServerSpec(name="pylsp", command=("pylsp",), extensions=(".py",)),
        LspServerSpec(name="gopls", command=("gopls",), extensions=(".go",)),
    )
    found = language_server_findings(
        Config(lsp_servers=specs), which=lambda cmd: "/usr/bin/pylsp" if cmd == "pylsp" else None
    )

    assert [(f.level, f.text) for f in found] == [
        ("ok", "language server pylsp: /usr/bin/pylsp"),
        ("warning", "language server gopls: `gopls` is not on the PATH (the lsp tool skips it)"),
    ]


def test_a_shadowed_config_file_is_named(tmp_path: Path) -> None:
    (tmp_path / ".mm.yaml").write_text("model: a\n")
    (tmp_path / "mm.yaml").write_text("model: b\n")

    found = config_findings(Config(source=tmp_path / ".mm.yaml"), tmp_path, {"HOME": str(tmp_path)})

    assert [f.text for f in found] == [
        f"config {tmp_path / '.mm.yaml'} (used)",
        f"config {tmp_path / 'mm.yaml'} (found, not used: an earlier one wins)",
    ]


def test_a_missing_language_server_comes_with_the_line_that_installs_it() -> None:
    from mm_tui.lsp.spec import LspServerSpec

    specs = (
        LspServerSpec(
            name="css", command=("vscode-css-language-server", "--stdio"), extensions=(".css",)
        ),
        LspServerSpec(name="ra", command=("rust-analyzer",), extensions=(".rs",)),
        LspServerSpec(name="fortls", command=("/opt/bin/fortls",), extensions=(".f90",)),
        LspServerSpec(name="mine", command=("my-own-server",), extensions=(".x",)),
    )
    found = language_server_findings(Config(lsp_servers=specs), which=lambda cmd: None)
    out = io.StringIO()
    print_findings(found, out)

    assert out.getvalue().splitlines()[:7] == [
        "! language server css: `vscode-css-language-server` is not on the PATH (the lsp tool skips it)",
        "    run: npm install -g vscode-langservers-extracted",
        "! language server ra: `rust-analyzer` is not on the PATH (the lsp tool skips it)",
        "    run: rustup component add rust-analyzer rust-src",
        "! language server fortls: `/opt/bin/fortls` is not on the PATH (the lsp tool skips it)",
        "    run: pip install fortls",
        "! language server mine: `my-own-server` is not on the PATH (the lsp tool skips it)",
    ]


# -- asking the model itself ---------------------------------------------------------------

COUNTING = Reply(
    text="".join(f"{n}\n" for n in range(1, 41)),
    usage={"prompt_tokens": 20, "completion_tokens": 80, "total_tokens": 100},
)


def probe_lines(tmp_path: Path, server: ScriptedServer) -> tuple[int, list[str]]:
    done = mm("doctor", "--base-url", server.base_url, cwd=tmp_path)
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout.splitlines()


def test_the_probe_sees_a_model_that_calls_tools_natively_and_its_pace(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("report_check", {"word": "ready"})]), COUNTING)
    status, lines = probe_lines(tmp_path, model_server)
    assert status == 0, lines
    assert "✓ tool calls: native — scripted-model called the probe tool" in lines
    assert any(line.startswith("✓ generation ") and "tokens/s" in line for line in lines)
    probe, speed = model_server.requests
    assert [t["function"]["name"] for t in probe["tools"]] == ["report_check"]
    assert "tools" not in speed


@pytest.mark.parametrize(
    ("reply", "says", "fix"),
    [
        (
            Reply(
                text='<tool_call>{"name": "report_check", "arguments": {"word": "ready"}}'
                "</tool_call>"
            ),
            "! tool calls: scripted-model wrote the probe call as text",
            "    run: llama-server -m MODEL.gguf --jinja  # or set toolCalls: text in .mm.yaml",
        ),
        (
            Reply(text="Ready! I don't have the ability to call functions."),
            "! tool calls: scripted-model did not call the probe tool (it answered “Ready! I "
            "don't have the ability to call functions.”)",
            "    run: llama-server -m MODEL.gguf --jinja  # or set toolCalls: text in .mm.yaml",
        ),
    ],
    ids=["as-text", "ignored"],
)
def test_the_probe_tells_tools_written_as_text_or_ignored_with_the_fix(
    tmp_path: Path, model_server: ScriptedServer, reply: Reply, says: str, fix: str
) -> None:
    model_server.enqueue(reply, COUNTING)
    status, lines = probe_lines(tmp_path, model_server)
    assert status == 0, lines  # mm-tui still works: text mode reads calls
    at = next(i for i, line in enumerate(lines) if line.startswith(says[:40]))
    assert lines[at].startswith(says.split(" — ")[0]) and lines[at + 1] == fix


def test_a_server_refusing_tools_is_a_problem_with_its_own_words(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(status=400, error_body={"error": {"message": "tools param requires --jinja flag"}}),
        COUNTING,
    )
    status, lines = probe_lines(tmp_path, model_server)
    assert status == 1
    refused = next(line for line in lines if "refused a request with tools" in line)
    assert refused.startswith("✗ ") and "tools param requires --jinja flag" in refused


def test_a_slow_model_is_said_with_what_a_long_answer_would_take(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    slow = Reply(
        text="1\n2\n3\n4\n",
        chunk_size=2,
        delay=0.6,  # a token every 0.6 s at best: under 2 tokens/s, whatever the machine
        usage={"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24},
    )
    model_server.enqueue(Reply(tool_calls=[ToolCall("report_check", {"word": "ready"})]), slow)
    status, lines = probe_lines(tmp_path, model_server)
    assert status == 0
    [pace] = [line for line in lines if line.startswith("! generation ")]
    assert "slow: a 500-token answer takes" in pace


def test_the_context_ollama_loaded_the_model_with_is_read_after_the_probe(
    ollama: tuple[str, type[_OllamaHandler]],
) -> None:
    url, handler = ollama
    handler.models = ["gemma3:12b"]
    handler.loaded_context = 4096
    smaller = served_context(Config(base_url=url), "gemma3:12b", expected=16384)
    assert (smaller.level, smaller.text) == (
        "warning",
        "context served: gemma3:12b is loaded with 4096 tokens, less than the 16384 assumed — "
        "set contextWindow: 4096, or load it with more",
    )
    handler.loaded_context = 16384
    same = served_context(Config(base_url=url), "gemma3:12b", expected=16384)
    assert same.text == "context served: gemma3:12b is loaded with 16384 tokens (ollama /api/ps)"
