"""The warm path's shortcuts (bench/bench_lsp.py: a warm definition within 1.2x of a direct
request) read exactly what the lenient path reads, and never miss an edit between calls.

Each shortcut is attacked where it could differ: msgspec's frames against the json module's
(bytes that are not UTF-8, NaN, a header with more fields), the C-speed reading of a usual
Location against the lenient one, a document re-read into an equal text, and files rewritten
in place between two warm calls with their size and modification time kept.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from mm_tui.lsp.defaults import BASEDPYRIGHT
from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.documents import OpenDocuments
from mm_tui.lsp.formatting import WireLocation, wire_locations
from mm_tui.lsp.framing import FrameReader, frame
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import copy_project, rewrite_in_place_keeping_size_and_time, text_of

DEFINITION = LspQuery("definition", "app.py", symbol="greet")
GREET = "greetings.py:5:5  def greet(name: str) -> str:"


def framed(body: bytes, header: bytes = b"") -> bytes:
    return b"Content-Length: %d\r\n%b\r\n%b" % (len(body), header, body)


def test_frames_msgspec_refuses_are_read_as_the_json_module_reads_them() -> None:
    reader = FrameReader()
    reader.feed(framed(b'{"id": 1, "result": "caf\xff"}'))  # not UTF-8: replaced, as before
    reader.feed(framed(b'{"id": 2, "result": NaN}'))  # not JSON, but Python's json reads it
    reader.feed(framed(b'{"id": 3, "result": "\\ud83d"}'))  # a lone surrogate
    reader.feed(framed(b'{"id": 4, "result": 1}', b"Content-Type: application/json\r\n"))
    reader.feed(framed(b'{"id": 5, "result": 12345678901234567890123}'))
    got = [reader.next_message() for _ in range(5)]
    assert got[0] == {"id": 1, "result": "caf\ufffd"}
    assert got[1] is not None and got[1]["result"] != got[1]["result"]  # NaN
    assert got[2:] == [
        {"id": 3, "result": "\ud83d"},
        {"id": 4, "result": 1},
        {"id": 5, "result": 12345678901234567890123},
    ]
    assert reader.next_message() is None


@pytest.mark.parametrize(
    "params",
    [
        {"text": "naïve 🎉"},  # non-ASCII: escaped, the frame stays ASCII
        {"path": Path("/p/a.py")},  # a value msgspec cannot write: the json module's way
        {"big": 2**70, "none": None, "list": [1.5, True, "x"]},
    ],
)
def test_a_plain_frame_says_what_the_json_module_would(params: dict[str, Any]) -> None:
    message = {"jsonrpc": "2.0", "id": "mm-1", "method": "m", "params": params}
    header, body = frame(message).split(b"\r\n\r\n", 1)
    assert header == b"Content-Length: %d" % len(body)
    assert body.isascii()
    expected = json.loads(json.dumps(message, default=str))
    assert json.loads(body) == expected


def location(**fields: Any) -> dict[str, Any]:
    place = {
        "uri": "file:///p/a.py",
        "range": {"start": {"line": 4, "character": 4}, "end": {"line": 4, "character": 9}},
    }
    place.update(fields)
    return place


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (location(), WireLocation("/p/a.py", 4, 4, 4, 9)),
        (  # an empty uri: the LocationLink's target is read, as the lenient reader does
            location(uri="", targetUri="file:///p/b.py"),
            WireLocation("/p/b.py", 4, 4, 4, 9),
        ),
        (  # negative numbers are clamped at 0
            location(
                range={"start": {"line": -1, "character": -2}, "end": {"line": 0, "character": 3}}
            ),
            WireLocation("/p/a.py", 0, 0, 0, 3),
        ),
        (  # a bool is an int to the lenient reader
            location(
                range={"start": {"line": True, "character": 1}, "end": {"line": 1, "character": 2}}
            ),
            WireLocation("/p/a.py", True, 1, 1, 2),
        ),
        (  # no usable end: a range read as its start only
            location(range={"start": {"line": 2, "character": 1}, "end": None}),
            WireLocation("/p/a.py", 2, 1, -1, 0),
        ),
        (  # a float: skipped
            location(
                range={"start": {"line": 2.0, "character": 1}, "end": {"line": 2, "character": 3}}
            ),
            None,
        ),
        (
            {"targetUri": "file:///p/b.py", "targetSelectionRange": location()["range"]},
            WireLocation("/p/b.py", 4, 4, 4, 9),
        ),
        (location(uri="untitled:Untitled-1"), None),  # no file: skipped, not a failure
        (location(uri="file:///p/a%00.py"), None),
        (["file:///p/a.py"], None),
        ("file:///p/a.py", None),
        (None, None),
    ],
)
def test_the_usual_location_and_every_odd_one_read_as_the_lenient_reader_reads_them(
    item: Any, expected: WireLocation | None
) -> None:
    assert wire_locations([item]) == ([expected] if expected else [])


class Recorder:
    """What OpenDocuments sends through, recorded."""

    capabilities: dict[str, object] = {"textDocumentSync": 1}

    def __init__(self) -> None:
        self.sent: list[str] = []

    def notify(self, method: str, params: object) -> None:
        self.sent.append(method)

    def registered_options(self, method: str) -> list[Any]:
        return []


def test_a_document_read_again_into_an_equal_text_is_not_sent_again(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    recorder = Recorder()
    documents = OpenDocuments(recorder, DiskTexts())
    first = documents.sync(path, "x = 1\n")
    again = documents.sync(path, "".join(["x = 1", "\n"]))  # equal, another string
    assert recorder.sent == ["textDocument/didOpen"]
    assert (again.version, again.changed, first.changed) == (1, False, True)
    assert documents.text_of(again.key) is again.text  # the newer string, looked up by identity
    changed = documents.sync(path, "x = 2\n")
    assert recorder.sent == ["textDocument/didOpen", "textDocument/didChange"]
    assert (changed.version, changed.changed, documents.version_of(changed.key)) == (2, True, 2)


def test_the_other_open_file_rewritten_in_place_between_warm_calls_is_sent_again(
    tmp_path: Path,
) -> None:
    # greetings.py is open only because the first answer pointed into it; after warm calls
    # it is trusted from its stat. Rewritten in place with its size and time kept, greet two
    # lines lower: its change time moved, so the next call must re-send it. basedpyright
    # only: pylsp's jedi reads an imported module from disk, its cache keyed by the mtime
    # kept here, whatever the client sends (it answers the old place).
    workspace = LspWorkspace([BASEDPYRIGHT], copy_project(tmp_path))
    try:
        greetings = workspace.root / "greetings.py"
        old = time.time() - 10  # past disk.py's racy second: trusted from a stat
        for path in workspace.root.glob("*.py"):
            os.utime(path, (old, old))
        for _ in range(3):
            assert text_of(workspace.execute(DEFINITION)) == GREET
        text = greetings.read_text()
        moved = text.replace('"""Greetings used by the app."""', '#\n#\n"""Greetings."""', 1)
        assert moved != text
        rewrite_in_place_keeping_size_and_time(greetings, moved)
        assert text_of(workspace.execute(DEFINITION)) == GREET.replace(":5:", ":7:")
    finally:
        workspace.close()


def test_a_file_rewritten_twice_within_its_clock_tick_keeps_being_read(
    own_workspace: LspWorkspace,
) -> None:
    # A write, a warm call, then another write of the same size with the same mtime, as two
    # writes within one timestamp tick leave it: the file is too young to be trusted from
    # its stat, so each call reads it again and sees the second write.
    app = own_workspace.root / "app.py"
    assert text_of(own_workspace.execute(DEFINITION)) == GREET
    original = app.read_text()
    app.write_text(original)  # just written: young
    assert text_of(own_workspace.execute(DEFINITION)) == GREET
    local = "def greet(x):\n    return x\n\n\nbanner = greet('world')\n"
    rewrite_in_place_keeping_size_and_time(app, local)
    assert text_of(own_workspace.execute(DEFINITION)) == "app.py:1:5  def greet(x):"
