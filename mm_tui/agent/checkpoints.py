"""Checkpoints of the files a turn changed, so `/undo` can put them back.

Before `write_file`, `edit_file` or an lsp rename writes a file, the file as it was is kept —
its bytes and mode, or "did not exist" — once per file per turn, on disk beside the session
(`<session>.undo/<turn>/`: a `manifest.json` and one blob per file), bounded in count and bytes.
After each write the file's new digest is noted, so an undo can tell that someone (the person,
their editor, a later command) changed or deleted the file since: then nothing is restored
unless the person says `force`, and the files are named. Blobs are bytes, so binary files
come back exactly. The stack lives on disk: undos in a row walk back turn by turn, and work
after `--continue`. Pure Python: the window asks through `AgentPort.undo`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from mm_tui.agent.tools.safe_files import MAX_EDIT_BYTES, FileTooLarge, read_regular
from mm_tui.support.atomic_write import write_atomically

log = logging.getLogger(__name__)

#: Turns kept for undo, newest first; older ones are dropped.
MAX_TURNS = 20
#: Bytes of before-contents kept for a session; past it the oldest turns are dropped.
MAX_BYTES = 64 << 20
MANIFEST = "manifest.json"


UNDO_NOTE = (
    "<undo>\nThe person undid the file changes of the turn that began with their message "
    "{prompt}: {what}. Those files are now as they were before that turn.\n</undo>"
)


def undo_note(result: UndoResult, cwd: Path) -> str:
    """What the model is told with the next message, so it does not trust its memory of
    files an undo put back."""
    parts: list[str] = []
    if result.restored:
        parts.append("restored " + ", ".join(shown_path(p, cwd) for p in result.restored))
    if result.removed:
        removed = ", ".join(shown_path(p, cwd) for p in result.removed)
        parts.append(f"removed {removed} (it did not exist before)")
    if result.failed:
        parts.append("could not restore " + ", ".join(result.failed))
    prompt = json.dumps(result.prompt or "", ensure_ascii=False)
    return UNDO_NOTE.format(prompt=prompt, what="; ".join(parts) or "no file")


def shown_path(path: str, cwd: Path) -> str:
    """A path as the person and the model read it: relative inside the project."""
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return path


def digest(path: Path) -> str:
    """What the file holds now, as a hash ("" when it does not exist or cannot be read)."""
    try:
        return hashlib.sha256(read_regular(path, MAX_EDIT_BYTES)).hexdigest()
    except FileTooLarge:
        return "too large"
    except OSError:
        return ""


@dataclass
class FileBefore:
    """One file as it was before the turn first changed it."""

    path: str  # absolute, symbolic links resolved: the file the tools wrote
    existed: bool
    mode: int = 0
    blob: str = ""  # the blob's name in the turn's folder ("" when none was kept)
    size: int = 0
    kept: bool = True  # False: too large or unreadable, cannot be restored
    created_dirs: list[str] = field(default_factory=list)  # made for a new file, deepest last
    after: str = ""  # digest after the turn's last write ("" = the file was gone)


@dataclass
class TurnCheckpoint:
    """The files one turn changed, and the message that started the turn."""

    number: int
    prompt: str
    files: dict[str, FileBefore] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=1)

    @classmethod
    def from_json(cls, text: str) -> TurnCheckpoint:
        raw = json.loads(text)
        files = {key: FileBefore(**value) for key, value in raw["files"].items()}
        return cls(int(raw["number"]), str(raw["prompt"]), files)


@dataclass(frozen=True)
class UndoResult:
    """What `/undo` did: the turn's message (None: nothing undone) and the lines to say."""

    prompt: str | None
    restored: tuple[str, ...] = ()  # files put back as they were
    removed: tuple[str, ...] = ()  # files the turn created, removed
    changed_since: tuple[str, ...] = ()  # changed after the turn: nothing restored unless forced
    deleted_since: tuple[str, ...] = ()  # among those, the ones deleted since
    failed: tuple[str, ...] = ()  # `path: reason`, not restored


class Checkpoints:
    """The undo stack of one session; `folder()` is where it lives (it moves with `/new`)."""

    def __init__(self, folder: Callable[[], Path]) -> None:
        self.folder = folder
        self._turn: TurnCheckpoint | None = None
        self._dir: Path | None = None
        self._unsettled: list[str] = []
        self._prompt = ""

    # -- recording, in the turn's worker ----------------------------------------------------

    def begin_turn(self, prompt: str) -> None:
        """A turn starts: its checkpoint is made when it first changes a file."""
        self._turn, self._dir, self._unsettled = None, None, []
        self._prompt = prompt

    def before_change(self, path: Path) -> None:
        """The tool is about to write `path`: keep it as it is, the first time this turn."""
        real = Path(os.path.realpath(path))
        key = str(real)
        turn = self._open_turn()
        self._unsettled.append(key)
        if key in turn.files or self._dir is None:
            return
        before = self._keep(real, len(turn.files))
        turn.files[key] = before
        self._save()

    def settle(self) -> None:
        """The tool has written: note each file's new digest (to see later changes)."""
        if self._turn is None:
            return
        for key in self._unsettled:
            if key in self._turn.files:
                self._turn.files[key].after = digest(Path(key))
        self._unsettled = []
        self._save()

    def end_turn(self) -> None:
        """The turn is over: drop files it left as they were, then old turns past the bounds."""
        turn, folder = self._turn, self._dir
        self.settle()
        self._turn, self._dir = None, None
        if turn is None or folder is None:
            return
        for key, before in list(turn.files.items()):
            if before.existed and before.kept and before.after == self._blob_digest(folder, before):
                del turn.files[key]  # written back to what it was (a rename rolled back)
        if not turn.files:
            shutil.rmtree(folder, ignore_errors=True)
            return
        self._write_manifest(folder, turn)
        self._prune()

    # -- undoing, while no turn runs --------------------------------------------------------

    def undo(self, *, force: bool = False) -> UndoResult:
        """Put back the files of the newest checkpoint; without `force`, nothing when one of
        them changed since the turn (the person's work is never clobbered silently)."""
        stack = self._stack()
        if not stack:
            return UndoResult(None)
        folder, turn = stack[-1]
        changed = [
            before.path
            for before in turn.files.values()
            if digest(Path(before.path)) != before.after
        ]
        deleted = tuple(path for path in changed if not Path(path).exists())
        if changed and not force:
            return UndoResult(None, changed_since=tuple(changed), deleted_since=deleted)
        restored: list[str] = []
        removed: list[str] = []
        failed: list[str] = []
        for before in turn.files.values():
            try:
                if self._restore(folder, before):
                    restored.append(before.path)
                else:
                    removed.append(before.path)
            except OSError as error:
                log.debug("cannot restore %s", before.path, exc_info=True)
                failed.append(f"{before.path}: {error.strerror or error}")
        shutil.rmtree(folder, ignore_errors=True)
        return UndoResult(
            turn.prompt, tuple(restored), tuple(removed), tuple(changed), deleted, tuple(failed)
        )

    # -- internals --------------------------------------------------------------------------

    def _open_turn(self) -> TurnCheckpoint:
        if self._turn is None:
            stack = self._stack()
            number = (stack[-1][1].number + 1) if stack else 1
            self._turn = TurnCheckpoint(number, self._prompt)
            folder = self.folder() / f"{number:06d}"
            try:
                folder.mkdir(parents=True, mode=0o700)
                self._dir = folder
            except OSError:
                log.debug("cannot keep undo checkpoints in %s", folder, exc_info=True)
                self._dir = None
        return self._turn

    def _keep(self, real: Path, index: int) -> FileBefore:
        key = str(real)
        assert self._dir is not None
        try:
            info = os.stat(real)
        except FileNotFoundError:
            return FileBefore(key, existed=False, created_dirs=_missing_dirs(real.parent))
        except OSError:
            log.debug("cannot stat %s", real, exc_info=True)
            return FileBefore(key, existed=True, kept=False)
        mode = stat.S_IMODE(info.st_mode)
        try:
            data = read_regular(real, MAX_EDIT_BYTES)
        except OSError:
            log.debug("cannot keep %s for undo", real, exc_info=True)
            return FileBefore(key, existed=True, mode=mode, kept=False)
        blob = f"{index:04d}.bin"
        try:
            descriptor = os.open(self._dir / blob, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as out:
                out.write(data)
        except OSError:
            log.debug("cannot write the undo blob of %s", real, exc_info=True)
            return FileBefore(key, existed=True, mode=mode, kept=False)
        return FileBefore(key, existed=True, mode=mode, blob=blob, size=len(data))

    def _save(self) -> None:
        if self._turn is not None and self._dir is not None:
            self._write_manifest(self._dir, self._turn)

    @staticmethod
    def _write_manifest(folder: Path, turn: TurnCheckpoint) -> None:
        try:
            write_atomically(folder / MANIFEST, turn.to_json().encode("utf-8"), new_file_mode=0o600)
        except OSError:
            log.debug("cannot write the undo manifest in %s", folder, exc_info=True)

    @staticmethod
    def _blob_digest(folder: Path, before: FileBefore) -> str:
        try:
            return hashlib.sha256((folder / before.blob).read_bytes()).hexdigest()
        except OSError:
            return "?"

    def _stack(self) -> list[tuple[Path, TurnCheckpoint]]:
        """Every finished checkpoint on disk, oldest first (the open turn's excluded)."""
        try:
            folders = sorted(p for p in self.folder().iterdir() if p.is_dir())
        except OSError:
            return []
        stack: list[tuple[Path, TurnCheckpoint]] = []
        for folder in folders:
            if folder == self._dir:
                continue
            try:
                stack.append((folder, TurnCheckpoint.from_json((folder / MANIFEST).read_text())))
            except (OSError, ValueError, KeyError, TypeError):
                log.debug("undo checkpoint %s unreadable: skipped", folder, exc_info=True)
        return stack

    def _prune(self) -> None:
        stack = self._stack()
        total = sum(f.size for _, turn in stack for f in turn.files.values())
        while stack and (len(stack) > MAX_TURNS or total > MAX_BYTES) and len(stack) > 1:
            folder, turn = stack.pop(0)
            total -= sum(f.size for f in turn.files.values())
            shutil.rmtree(folder, ignore_errors=True)

    @staticmethod
    def _restore(folder: Path, before: FileBefore) -> bool:
        """Put one file back; True: restored, False: removed (the turn created it)."""
        path = Path(before.path)
        if not before.existed:
            path.unlink(missing_ok=True)
            for directory in reversed(before.created_dirs):
                try:
                    Path(directory).rmdir()  # only when empty: never anything of the person's
                except OSError:
                    break
            return False
        if not before.kept:
            raise OSError(0, "it was not kept (too large or unreadable)")
        if os.path.realpath(path) != str(path):  # kept by its real path: a link came since
            raise OSError(0, "it is now a symbolic link (or under one); a link is not followed")
        data = (folder / before.blob).read_bytes()
        if path.exists():
            os.chmod(path, before.mode | stat.S_IWUSR)  # a read-only file is written back too
        write_atomically(path, data, new_file_mode=before.mode)
        os.chmod(path, before.mode)
        return True


def _missing_dirs(directory: Path) -> list[str]:
    """The folders that do not exist yet on the way to `directory`, outermost first."""
    missing: list[str] = []
    while not directory.exists() and directory != directory.parent:
        missing.append(str(directory))
        directory = directory.parent
    return list(reversed(missing))
