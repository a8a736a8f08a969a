"""The JSON-RPC framing of the tests' tiny fake language servers, written once.

Each fake server (tests/faults/fixtures/faulty_lsp_server.py, tests/lsp/fixtures/
publish_once_server.py, renaming_server.py, loading_server.py) runs as a script over its
stdin and stdout; `read` and `send` speak LSP's `Content-Length` frames on them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

stdin, stdout = sys.stdin.buffer, sys.stdout.buffer


def read() -> dict[str, Any] | None:
    """The next message from the client, or None when its pipe closed."""
    length = 0
    while True:
        line = stdin.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stdin.read(length))


def send(message: dict[str, Any]) -> None:
    """One message to the client, flushed."""
    body = json.dumps(message).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()


def answer(ident: Any, result: Any) -> None:
    send({"jsonrpc": "2.0", "id": ident, "result": result})


def notify(method: str, params: Any) -> None:
    send({"jsonrpc": "2.0", "method": method, "params": params})
