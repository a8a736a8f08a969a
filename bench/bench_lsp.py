"""How much the `lsp` tool adds to a language server's own answer time.

Run `python -m bench.bench_lsp`. For pylsp and basedpyright, on the tests' fixture project:
a warm `definition` through the tool (`LspTool.run`: stat the file, find the symbol, ask, read
the target's source line, format) against the same request sent straight to a second server
of the same kind by a bare blocking JSON-RPC client over the same kind of connection (the
server's stdin and stdout pipes). The baseline is made fair: the direct client announces the
same capabilities, settings and initialization options as mm-tui (so the server answers the
same way) and has the same two files open (the tool opens the file an answer points into).
The two are timed alternately, in `ROUNDS` rounds of `REPEATS` calls; each figure is the median
of all its calls, so the ratio holds on a noisy machine where absolute times do not. The CPU
the client process spends per call (all its threads) is reported beside it. Aim: the
warm ratio at or below 1.2. The cold start (spawn, initialize, open, first
definition) is reported against the bare client's cold start too.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.measure import print_rows, row
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.lsp import LspTool
from mm_tui.lsp.capabilities import CLIENT_CAPABILITIES
from mm_tui.lsp.defaults import BASEDPYRIGHT, PYLSP
from mm_tui.lsp.spec import LspServerSpec

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "lsp" / "fixtures" / "pyproj"
REPEATS = 40
ROUNDS = 5
WARM_NAME = "lsp definition, warm, {server}: tool vs direct request"
CPU_NAME = "lsp definition, warm, {server}: client CPU per call, tool vs direct"
SPLIT_NAME = (
    "lsp definition, warm, {server}: the tool's CPU around its request vs in it (the request)"
)
COLD_NAME = "lsp cold start + first definition, {server}: tool vs direct"
IMPORT_NAME = "lsp client import (lsprotocol) vs bare interpreter start"
TARGETS = {WARM_NAME.format(server=name): 1.2 for name in ("pylsp", "basedpyright")}
ARGS = {"action": "definition", "path": "app.py", "symbol": "greet"}
EXPECTED = "greetings.py:5:5  def greet(name: str) -> str:"


class DirectClient:
    """The least a client can do: blocking JSON-RPC over the server's pipes, no library."""

    def __init__(self, spec: LspServerSpec, root: Path) -> None:
        self.spec, self.root = spec, root
        self.process = subprocess.Popen(
            spec.command,
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def _receive(self) -> dict[str, Any]:
        stdout = self.process.stdout
        assert stdout is not None
        length = 0
        while (header := stdout.readline().strip()) != b"":
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":")[1])
        return json.loads(stdout.read(length))

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self._receive()
            if "method" in message and "id" in message:  # the server asks: answer plainly
                items = (message.get("params") or {}).get("items") or []
                result = (
                    [None] * len(items) if message["method"] == "workspace/configuration" else None
                )
                self._send({"id": message["id"], "result": result})
            elif message.get("id") == self.next_id:
                return message.get("result")

    def start(self) -> None:
        from lsprotocol import converters

        uri = self.root.as_uri()
        self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": uri, "name": self.root.name}],
                "initializationOptions": self.spec.initialization_options,
                "capabilities": converters.get_converter().unstructure(CLIENT_CAPABILITIES),
            },
        )
        self.notify("initialized", {})
        if self.spec.settings:
            self.notify("workspace/didChangeConfiguration", {"settings": self.spec.settings})
        for name in ("app.py", "greetings.py"):  # what the tool has open after its first answer
            path = self.root / name
            item = {"uri": path.as_uri(), "languageId": "python", "version": 1,
                    "text": path.read_text()}  # fmt: skip
            self.notify("textDocument/didOpen", {"textDocument": item})

    def definition(self) -> Any:
        # The place the tool tries first: `greet` in line 1, `from greetings import Person, greet`.
        position = {"line": 0, "character": 30}
        params = {"textDocument": {"uri": (self.root / "app.py").as_uri()}, "position": position}
        return self.request("textDocument/definition", params)

    def stop(self) -> None:
        self.request("shutdown", None)
        self.notify("exit", None)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def _points_at_greet(answer: Any) -> bool:
    """Whether a definition answer (Location or LocationLink list) names greet's line."""
    items = answer if isinstance(answer, list) else [answer]
    for item in items:
        if isinstance(item, dict):
            uri = item.get("uri", item.get("targetUri", ""))
            where = item.get("range", item.get("targetSelectionRange")) or {}
            if str(uri).endswith("/greetings.py") and where.get("start", {}).get("line") == 4:
                return True
    return False


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def bench_server(spec: LspServerSpec, folder: Path) -> list[dict[str, Any]]:
    """The cold and warm rows for one server, tool and direct client timed alternately."""
    tool_root, direct_root = folder / f"{spec.name}-tool", folder / f"{spec.name}-direct"
    shutil.copytree(FIXTURE, tool_root)
    shutil.copytree(FIXTURE, direct_root)
    tool, _ = LspTool.create([spec], tool_root, user_configured=True)
    if tool is None:
        raise RuntimeError(f"{spec.command[0]} is not on the PATH")
    context = ToolContext(cwd=tool_root)
    direct = DirectClient(spec, direct_root)
    try:
        started = time.perf_counter()
        output = tool.run(ARGS, context).output
        tool_cold = _ms(started)
        started = time.perf_counter()
        direct.start()
        answer = direct.definition()
        direct_cold = _ms(started)
        if output != EXPECTED:
            raise RuntimeError(f"unexpected answer from the tool: {output!r}")
        if not _points_at_greet(answer):  # the same question, answered the same way
            raise RuntimeError(f"unexpected answer to the direct request: {answer!r}")
        time.sleep(1.1)  # the copied files age past disk.py's racy second: trusted from a stat
        for _ in range(REPEATS):  # both warm
            tool.run(ARGS, context)
            direct.definition()
        tool_times, direct_times, tool_cpu, direct_cpu = [], [], [], []
        for _ in range(ROUNDS * REPEATS):
            started, cpu = time.perf_counter(), time.process_time()
            tool.run(ARGS, context)
            tool_times.append(_ms(started))
            tool_cpu.append((time.process_time() - cpu) * 1000)
            started, cpu = time.perf_counter(), time.process_time()
            direct.definition()
            direct_times.append(_ms(started))
            direct_cpu.append((time.process_time() - cpu) * 1000)
        around, inside = _split_at_the_request(tool, context)
    finally:
        tool.close()
        direct.stop()
    name = WARM_NAME.format(server=spec.name)
    median = statistics.median
    warm = row(name, median(tool_times), median(direct_times), max_ratio=TARGETS[name])
    cpu_row = row(CPU_NAME.format(server=spec.name), median(tool_cpu), median(direct_cpu))
    split = row(SPLIT_NAME.format(server=spec.name), around, inside)
    return [warm, cpu_row, split, row(COLD_NAME.format(server=spec.name), tool_cold, direct_cold)]


def _split_at_the_request(tool: LspTool, context: ToolContext) -> tuple[float, float]:
    """Median thread CPU (ms) of a warm tool call outside and inside its request, timed at
    the channel's `request` (wrapped for these calls only)."""
    from mm_tui.lsp.channel import Channel

    inside: list[float] = []
    request = Channel.request

    def timed(channel: Channel, *args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return request(channel, *args, **kwargs)
        finally:
            inside.append((time.thread_time() - started) * 1000)

    around: list[float] = []
    Channel.request = timed
    try:
        for _ in range(ROUNDS * REPEATS):
            started = time.thread_time()
            tool.run(ARGS, context)
            around.append((time.thread_time() - started) * 1000 - inside[-1])
    finally:
        Channel.request = request
    return statistics.median(around), statistics.median(inside)


def bench_import() -> dict[str, Any]:
    """What the first call pays once per session before any server starts: the imports."""

    def interpreter_ms(code: str) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(_ms(started))
        return statistics.median(times)

    bare = interpreter_ms("pass")
    return row(IMPORT_NAME, interpreter_ms("import mm_tui.lsp.workspace"), bare)


def run() -> list[dict[str, Any]]:
    """Every row of this bench: {"name", "value", "baseline", "ratio", "unit"}."""
    path = os.environ.get("PATH", "")
    scripts = str(Path(sys.executable).parent)  # the servers are console scripts beside python
    os.environ["PATH"] = os.pathsep.join([scripts, path])
    try:
        rows: list[dict[str, Any]] = [bench_import()]
        with tempfile.TemporaryDirectory(prefix="mm-bench-lsp-") as folder:
            for spec in (PYLSP, BASEDPYRIGHT):
                rows += bench_server(spec, Path(folder))
    finally:
        os.environ["PATH"] = path
    return rows


if __name__ == "__main__":
    print_rows(run())
