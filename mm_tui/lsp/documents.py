"""Keeping a server's view of each file equal to the disk (SPEC §1: the disk is the truth).

Before each request the file is re-read and sent: `didOpen` the first time, a whole-document
`didChange` when its content moved since; nothing when it did not. The model edits with
`edit_file`, so nobody else has to remember to tell the server.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, NamedTuple, Protocol
from urllib.parse import unquote, urlparse

from lsprotocol import types

from mm_tui.lsp.defaults import language_id
from mm_tui.lsp.disk import DiskTexts

_SYNC_NONE = 0  # TextDocumentSyncKind.None: the server wants no changes, only open/close


class SyncedDocument(NamedTuple):
    """A file as the server now sees it (a tuple: one is made by every call)."""

    uri: str
    key: str  # the real path, how publications and documents are looked up
    text: str
    version: int
    changed: bool  # opened or changed by this sync


@functools.lru_cache(maxsize=4096)
def _resolved(path: str) -> Path:
    return Path(os.path.realpath(path))


@functools.lru_cache(maxsize=4096)
def _key_of(path: str) -> str:
    return str(_resolved(path))


def real_path(path: Path | str) -> Path:
    """`path` with its links resolved. Remembered for the session: a project's layout of
    links does not change while the model works, and each answer resolves many paths."""
    return _resolved(os.fspath(path))


@functools.lru_cache(maxsize=4096)
def uri_of(path: str) -> str:
    """The `file://` URI of an absolute path."""
    return Path(path).as_uri()


class NotAFile(ValueError):
    """A URI naming no file on disk: another scheme (`untitled:`, `jdt://`), a relative
    path (it would be read from mm-tui's own folder), or one no path can hold (a NUL)."""


@functools.lru_cache(maxsize=4096)
def path_of_uri(uri: str) -> Path:
    """The real path of a `file://` URI (percent-decoded, links resolved); NotAFile else."""
    parsed = urlparse(uri)
    path = unquote(parsed.path)
    if parsed.scheme.lower() != "file" or not path.startswith("/") or "\0" in path:
        raise NotAFile(uri)
    return real_path(path)


@functools.lru_cache(maxsize=4096)
def key_of_uri(uri: str) -> str:
    """`path_of_uri` as text: the key documents and publications are kept under."""
    return str(path_of_uri(uri))


class DocumentChannel(Protocol):
    """The part of a server connection documents are sent through (no import cycle)."""

    @property
    def capabilities(self) -> dict[str, Any]: ...

    def notify(self, method: str, params: Any) -> None: ...

    def registered_options(self, method: str) -> list[Any]: ...


class OpenDocuments:
    """The files one server has open, with the version and text it last received."""

    def __init__(self, connection: DocumentChannel, disk: DiskTexts) -> None:
        self._connection = connection
        self._disk = disk
        #: What the server last received of each file (`changed` False: kept as it is
        #: returned by a sync that sends nothing, the warm path's).
        self._open: dict[str, SyncedDocument] = {}
        #: The version at which each file's text last changed (a re-send of the same text
        #: keeps it): a publication that followed an earlier version is about another text.
        self._text_since: dict[str, int] = {}

    def is_open(self, key: str) -> bool:
        return key in self._open

    def not_open(self, keys: list[str]) -> set[str]:
        """Those of `keys` the server does not have open."""
        return set(keys).difference(self._open)

    def text_of(self, key: str) -> str | None:
        """The text the server last received of a file (None when not open)."""
        known = self._open.get(key)
        return known.text if known is not None else None

    def version_of(self, key: str) -> int:
        """Our latest version of a file (0 when never sent)."""
        known = self._open.get(key)
        return known.version if known is not None else 0

    def text_since(self, key: str) -> int:
        """The version from which the server has had the file's current text (0: never)."""
        return self._text_since.get(key, 0)

    def reopen(self, key: str) -> SyncedDocument:
        """Close the file on the server and open it again, as a new version of the same
        text: a server that checks a file only when it is opened or saved (fortls) checks
        the text it was sent."""
        known = self._open[key]
        uri, version = known.uri, known.version + 1
        closed = types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        self._connection.notify("textDocument/didClose", closed)
        self._connection.notify(
            "textDocument/didOpen", _opened(uri, Path(key), version, known.text)
        )
        self._open[key] = known._replace(version=version)
        return SyncedDocument(uri, key, known.text, version, True)

    def sync(self, path: Path | str, text: str, *, again: bool = False) -> SyncedDocument:
        """Send `text` as the content of `path` if the server does not have it yet (or
        `again`: a new version of the same text, so the server analyses it anew)."""
        key = _key_of(os.fspath(path))
        known = self._open.get(key)
        if known is not None and not again and known.text == text:
            if known.text is not text:  # read again (a racy stamp): the next look is by identity
                known = self._open[key] = known._replace(text=text)
            return known
        uri = uri_of(key)
        if known is None:
            version = 1
            self._connection.notify("textDocument/didOpen", _opened(uri, Path(key), version, text))
        else:
            version = known.version + 1
            self._send_change(uri, Path(key), version, text)
        if known is None or known.text != text:
            self._text_since[key] = version
        self._open[key] = SyncedDocument(uri, key, text, version, False)
        return SyncedDocument(uri, key, text, version, True)

    def refresh(self, asked: str) -> bool:
        """Re-send every other open file whose content moved on disk since it was sent (an
        edit by bash, edit_file or the person's editor): the server answers about the project
        as it is, not only about the file asked. A deleted file is closed.

        True when one was re-sent: the asked file may include it, and a server that keeps
        its analysis of a file until that file changes (clangd's preamble) must be told."""
        moved = False
        read = self._disk.read
        for key, known in list(self._open.items()):
            if key == asked:
                continue
            try:
                text = read(key)  # a stat when it did not move
            except OSError:
                closed = types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri_of(key)))
                self._connection.notify("textDocument/didClose", closed)
                del self._open[key]
                self._text_since.pop(key, None)
                moved = True
                continue
            if text is not known.text:  # the same string: unchanged since sent
                moved = self.sync(key, text).changed or moved
        return moved

    def _send_change(self, uri: str, path: Path, version: int, text: str) -> None:
        if self._change_kind() == _SYNC_NONE:
            closed = types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
            self._connection.notify("textDocument/didClose", closed)
            self._connection.notify("textDocument/didOpen", _opened(uri, path, version, text))
        else:
            changed = types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
            self._connection.notify("textDocument/didChange", changed)
        save = self._save_option()
        if save is not None:
            # The change is already on disk: a server that rebuilds on save (clangd,
            # rust-analyzer) hears it was saved, as an editor would tell it.
            saved = types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri), text=text if save else None
            )
            self._connection.notify("textDocument/didSave", saved)

    def _sync_options(self) -> Any:
        return self._connection.capabilities.get("textDocumentSync")

    def _change_kind(self) -> int:
        sync = self._sync_options()
        if isinstance(sync, int):
            return sync
        if isinstance(sync, dict) and isinstance(sync.get("change"), int):
            return int(sync["change"])
        return 1

    def _save_option(self) -> bool | None:
        """None: the server wants no didSave; else whether it wants the text with it. It
        may ask in its capabilities or by registering `textDocument/didSave`, under several
        ids (each unregistered on its own): the text goes when any of them asks for it."""
        sync = self._sync_options()
        asked = [sync.get("save")] if isinstance(sync, dict) else []
        asked += self._connection.registered_options("textDocument/didSave")
        wanted = [save for save in asked if save is True or isinstance(save, dict)]
        if not wanted:
            return None
        return any(isinstance(save, dict) and bool(save.get("includeText")) for save in wanted)


def _opened(uri: str, path: Path, version: int, text: str) -> types.DidOpenTextDocumentParams:
    item = types.TextDocumentItem(
        uri=uri, language_id=language_id(path), version=version, text=text
    )
    return types.DidOpenTextDocumentParams(text_document=item)
