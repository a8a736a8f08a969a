"""Regenerate `mm_tui/demo/demo.json`: a real session of the real Agent and tools.

    python tests/window/make_demo_session.py

The scripted model server plays the model; bash, read_file, edit_file and lsp (pylsp) really
run in a throw-away project, so every output, diff and duration is what mm-tui produces. The
person answers the permission questions as the plan below says. Takes about 45 s (one command
runs into the 30 s limit, and the server's 503 is retried three times, on purpose).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import PermissionAnswer, PermissionRequest
from mm_tui.agent.session import SessionStore, read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall

DEMO = Path(__file__).resolve().parents[2] / "mm_tui" / "demo" / "demo.json"
SHOWN_CWD = "/home/dev/greeter"

GREETER = '''def greet(name: str) -> str:
    """Say hello to someone by name."""
    return f"Hello, {name[0].upper()}{name[1:]}!"
'''
TESTS = """from greeter import greet


def test_greet() -> None:
    assert greet("ada") == "Hello, Ada!"


def test_greet_empty() -> None:
    assert greet("") == "Hello, stranger!"
"""
ANSWER = """`greet` indexed `name[0]`, which fails on an empty string. Fixed:

```python
def greet(name: str) -> str:
    \"\"\"Say hello to someone by name.\"\"\"
    if not name:
        return "Hello, stranger!"
    return f"Hello, {name[0].upper()}{name[1:]}!"
```

| test | before | after |
|---|---|---|
| `test_greet` | pass | pass |
| `test_greet_empty` | **IndexError** | pass |

Both tests pass now.
"""
OLD = '    return f"Hello, {name[0].upper()}{name[1:]}!"'
NEW = '    if not name:\n        return "Hello, stranger!"\n' + OLD
PYTEST = "python -m pytest -q -p no:cacheprovider"

SCRIPT = [
    Reply(
        reasoning="The user says greet('') crashes. Let me look at the project first.",
        tool_calls=[ToolCall("bash", {"command": "ls"})],
    ),
    Reply(tool_calls=[ToolCall("lsp", {"action": "definition", "path": "test_greeter.py", "symbol": "greet"})]),
    Reply(tool_calls=[ToolCall("read_file", {"path": "greeter.py", "numbered": True})]),
    Reply(tool_calls=[ToolCall("bash", {"command": PYTEST})]),
    Reply(text="The empty name crashes on `name[0]`. I'll guard it.",
          tool_calls=[ToolCall("edit_file", {"path": "greeter.py", "edits": [{"old": OLD, "new": NEW}]})]),
    Reply(tool_calls=[ToolCall("bash", {"command": PYTEST})]),
    Reply(text=ANSWER),
    Reply(tool_calls=[ToolCall("bash", {"command": "rm -rf build/ dist/"})]),
    Reply(tool_calls=[ToolCall("bash", {"command": "tail -f /dev/null"})]),
    Reply(text="I left `build/` alone, as you asked. `tail -f` never ends by itself, so it ran into the 30 s limit; use `tail -n 50` instead."),
    *[Reply(status=503, error_body={"error": {"message": "model is loading"}})] * 4,
]  # fmt: skip
ANSWERS = {"rm -rf build/ dist/": PermissionAnswer.REJECT}  # everything else: allowed once


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        project = Path(tmp) / "greeter"
        project.mkdir()
        (project / "greeter.py").write_text(GREETER)
        (project / "test_greeter.py").write_text(TESTS)
        server.enqueue(*SCRIPT)
        config = Config(base_url=server.base_url, model="qwen2.5-coder:14b")

        def sink(event: Any) -> None:
            if isinstance(event, PermissionRequest):
                event.future.set_result(ANSWERS.get(event.detail, PermissionAnswer.ALLOW_ONCE))

        store = SessionStore(Path(tmp) / "sessions")
        agent = Agent(config, sink, project, store=store)
        os.chdir(project)
        try:
            agent.run_turn("Why does greet('') crash? Fix it and run the tests.")
            agent.run_turn("Clean the build directory, then follow the app log.")
            agent.run_turn("Now rename greet to welcome everywhere.")
        finally:
            agent.close()
        session = read_session_document(agent.session_path)
    session["cwd"] = SHOWN_CWD
    session["base_url"] = "http://localhost:11434/v1"
    text = json.dumps(session, indent=1, ensure_ascii=False).replace(str(project), SHOWN_CWD)
    DEMO.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {DEMO} ({len(session['messages'])} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
