"""What each slash command of SPEC §7 does: parse the prompt, then call one intent.

The commands change nothing themselves: turn state and the core's settings go through the
`TurnController`; screens (help, the grants list) are opened by the app through a
`CommandSurface`. Blocking calls run in thread workers and every outcome is one notice line.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from datetime import datetime
from pathlib import Path
from typing import Protocol

from mm_tui.agent.events import NoticeLevel
from mm_tui.agent.port import PermissionState
from mm_tui.window.slash_commands import UNKNOWN_COMMAND, parse_command
from mm_tui.window.turns import TurnController
from mm_tui.window.undo_lines import UNDO_USAGE

NEW_SESSION = "new session: the history and the loop detector start afresh"
QUEUE_USAGE = "usage: /queue [clear]"
PERMISSIONS_USAGE = "usage: /permissions [ask|allow|revoke <tool>]"
EXPORTED = "transcript exported to {path}"
EXPORT_EXISTS = "/export: {path} exists; not overwritten (give another name)"
EXPORT_MODE = 0o600  # a transcript holds what was said and what commands printed


def export_file_name(now: datetime) -> str:
    """`mm-transcript-20250101-120000.md`, in the working directory."""
    return f"mm-transcript-{now:%Y%m%d-%H%M%S}.md"


class CommandSurface(Protocol):
    """What the commands ask of the screen beyond the turns; the app implements it."""

    def say(self, level: NoticeLevel, text: str) -> None: ...

    def open_help(self) -> None: ...

    def open_grants(self, state: PermissionState, on_close: Callable[[Set[str]], None]) -> None:
        """The grants screen; `on_close` gets the grants revoked there."""
        ...

    def leave(self) -> None:
        """Quit the window, as Ctrl+Q."""
        ...

    def transcript_markdown(self) -> str: ...


class SlashCommands:
    """Parses a prompt that starts with `/` and runs the command's intent."""

    def __init__(self, turns: TurnController, surface: CommandSurface, cwd: Path) -> None:
        self.turns = turns
        self.surface = surface
        self.cwd = cwd

    def handle(self, text: str) -> bool:
        """Run the command in `text`; False when `text` is a message for the model."""
        parsed = parse_command(text)
        if parsed is None:
            return False
        command, word, argument = parsed
        if command is None:
            self.surface.say("warning", UNKNOWN_COMMAND.format(name=word))
            return True
        runners: dict[str, Callable[[str], None]] = {
            "/new": lambda _: self.turns.new_session(NEW_SESSION),
            "/compact": lambda _: self.turns.compact(),
            "/help": lambda _: self.surface.open_help(),
            "/model": self.turns.model,
            "/yolo": lambda _: self.turns.toggle_yolo(),
            "/permissions": self.run_permissions,
            "/export": self.run_export,
            "/init": self.run_init,
            "/resume": self.turns.resume,
            "/queue": self.run_queue,
            "/undo": self.run_undo,
            "/quit": lambda _: self.surface.leave(),
        }
        runners[command.name](argument)
        return True

    def run_queue(self, argument: str) -> None:
        """`/queue`: send the messages kept after Esc; `/queue clear`: drop them."""
        if argument == "clear":
            self.turns.clear_queue()
        elif not argument:
            self.turns.send_queue()
        else:
            self.surface.say("warning", QUEUE_USAGE)

    def run_init(self, _argument: str) -> None:
        """`/init`: ask the model to write a starter AGENTS.md."""
        from mm_tui.agent.project_instructions import INIT_PROMPT

        self.turns.submit(INIT_PROMPT)

    def run_undo(self, argument: str) -> None:
        """`/undo`: the last turn's files back; `/undo force` even over later changes."""
        if argument not in ("", "force"):
            self.surface.say("warning", UNDO_USAGE)
            return
        self.turns.undo(force=argument == "force")

    def run_permissions(self, argument: str) -> None:
        """`/permissions`: list and revoke session grants; `ask` / `allow` set the mode."""
        if not self.turns.ready_for("/permissions"):
            return
        word, _, tool = argument.partition(" ")
        tool = tool.strip()
        if not argument:
            state = self.turns.permission_state("/permissions")
            if state is not None:
                self.surface.open_grants(state, self.turns.revoke_chosen)
        elif word == "ask" and not tool:
            self.turns.set_permissions("ask")
        elif word == "allow" and not tool:
            self.turns.set_permissions("allow")
        elif word == "revoke":
            self.turns.revoke(tool)
        else:
            self.surface.say("warning", PERMISSIONS_USAGE)

    def run_export(self, argument: str) -> None:
        """`/export [file.md]`: the transcript as Markdown, in a new file only (0600).

        A name the person gave that exists is refused with a line (writing elsewhere would
        surprise them); the default name, which they did not choose, moves on to `-2`, `-3`.
        """
        from mm_tui.support.atomic_write import write_atomically

        now = datetime.now()
        path = Path(argument).expanduser() if argument else Path(export_file_name(now))
        if not path.is_absolute():
            path = self.cwd / path
        header = [
            "# mm-tui transcript",
            "",
            f"- model: {self.turns.top_line().model}",
            f"- directory: {self.cwd}",
            f"- exported: {now:%Y-%m-%d %H:%M}",
            "",
            "---",
            "",
        ]
        data = ("\n".join(header) + self.surface.transcript_markdown()).encode("utf-8")
        try:
            for attempt in range(1, 100):
                candidate = path.with_stem(f"{path.stem}-{attempt}") if attempt > 1 else path
                try:
                    write_atomically(candidate, data, new_file_mode=EXPORT_MODE, exclusive=True)
                except FileExistsError:
                    if argument:
                        self.surface.say("warning", EXPORT_EXISTS.format(path=path))
                        return
                    continue
                path = candidate
                break
            else:
                self.surface.say("warning", EXPORT_EXISTS.format(path=path))
                return
        except OSError as error:
            self.surface.say("error", f"/export failed: {error}")
            return
        self.surface.say("info", EXPORTED.format(path=path))
