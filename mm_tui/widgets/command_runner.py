"""What each slash command of SPEC §7 does in the window; the Agent does the real work.

Blocking calls (`compact`, `list_models`, `set_model`) run in thread workers; every outcome is
said in one notice line.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mm_tui.agent.events import Notice, TurnEnded
from mm_tui.widgets.event_bridge import TurnWorkerDone
from mm_tui.widgets.pickers import GrantsScreen, ModelPicker
from mm_tui.widgets.slash_commands import UNKNOWN_COMMAND, parse_command

if TYPE_CHECKING:
    from mm_tui.app import MMApp

TURN_RUNNING = "a turn is running — press Esc to interrupt it first"
NO_AGENT_IN_REPLAY = "{command} is not available in a replay"
AGENT_NOT_READY = "{command}: the agent is not ready yet"
NEW_SESSION = "new session: the history and the loop detector start afresh"
COMPACTING = "Compacting the history"
COMPACT_UNAVAILABLE = "/compact is not available yet"
YOLO_ON = "yolo on: tools run without asking"
YOLO_OFF = "yolo off: bash, edits and renames ask again"
PERMISSIONS_USAGE = "usage: /permissions [ask|allow|revoke <tool>]"
EXPORTED = "transcript exported to {path}"
MODEL_SET = "model: {model}"


def export_file_name(now: datetime) -> str:
    """`mm-transcript-20250101-120000.md`, in the working directory."""
    return f"mm-transcript-{now:%Y%m%d-%H%M%S}.md"


class SlashCommandRunner:
    """Parses a prompt that starts with `/` and runs the command against the app's Agent."""

    def __init__(self, app: MMApp) -> None:
        self.app = app

    def say(self, level: str, text: str) -> None:
        """One notice line in the transcript."""
        self.app.call_later(self.app.transcript.add_notice, level, text)

    def handle(self, text: str) -> bool:
        """Run the command in `text`; False when `text` is a message for the model."""
        parsed = parse_command(text)
        if parsed is None:
            return False
        command, word, argument = parsed
        if command is None:
            self.say("warning", UNKNOWN_COMMAND.format(name=word))
            return True
        getattr(self, f"run_{command.name[1:]}")(argument)
        return True

    def _agent(self, command: str, *, idle: bool = False) -> Any:
        """The Agent, or None after saying why the command cannot run now."""
        if self.app.replay_events is not None:
            self.say("warning", NO_AGENT_IN_REPLAY.format(command=command))
            return None
        if self.app.agent is None:
            self.say("warning", AGENT_NOT_READY.format(command=command))
            return None
        if idle and self.app.turn_running:
            self.say("warning", TURN_RUNNING)
            return None
        return self.app.agent

    # -- the commands ---------------------------------------------------------------------

    def run_new(self, argument: str) -> None:
        """`/new`: a fresh history; the transcript is cleared."""
        agent = self._agent("/new", idle=True)
        if agent is None:
            return
        agent.new_session()
        self.app.prompt_tokens = 0

        async def restart() -> None:
            await self.app.transcript.clear()
            await self.app.transcript.add_notice("info", NEW_SESSION)
            self.app.refresh_top_line()

        self.app.call_later(restart)

    def run_compact(self, argument: str) -> None:
        """`/compact`: run like a turn (Esc interrupts, messages queue), in a worker."""
        agent = self._agent("/compact", idle=True)
        if agent is None:
            return
        app = self.app
        app.turn_running = True
        app.turn_started_at = app.clock()
        app.status_line.state = COMPACTING

        def compact() -> None:
            try:
                compact_history = getattr(agent, "compact", None)
                if compact_history is None:
                    raise NotImplementedError
                compact_history()
            except NotImplementedError:
                app.bridge(Notice("warning", COMPACT_UNAVAILABLE))
            except Exception as error:  # a server fault ends the compaction, not the window
                app.bridge(Notice("error", f"/compact failed: {error}"))
            # On success the core says what it compacted, in its own notice.
            app.bridge(TurnWorkerDone(TurnEnded("answered")))

        app.run_worker(compact, thread=True, group="turn", exit_on_error=False)

    def run_help(self, argument: str) -> None:
        """`/help`: the keys and commands."""
        self.app.action_help()

    def run_model(self, argument: str) -> None:
        """`/model`: pick among the server's models; `/model name` switches at once."""
        agent = self._agent("/model", idle=True)
        if agent is None:
            return
        app = self.app

        def switch(name: str | None) -> None:
            if name:
                app.run_worker(lambda: set_model(name), thread=True, exit_on_error=False)

        def set_model(name: str) -> None:
            try:
                agent.set_model(name)
            except Exception as error:
                app.bridge(Notice("error", f"/model failed: {error}"))
                return
            app.bridge(Notice("info", MODEL_SET.format(model=name)))
            app.call_from_thread(app.refresh_top_line)

        def pick() -> None:
            try:
                models = agent.list_models()
            except Exception as error:
                app.bridge(Notice("error", f"/model: could not list the models: {error}"))
                return
            screen = ModelPicker(list(models), getattr(agent, "model", ""))
            app.call_from_thread(app.push_screen, screen, switch)

        if argument:
            switch(argument)
        else:
            app.run_worker(pick, thread=True, exit_on_error=False)

    def run_yolo(self, argument: str) -> None:
        """`/yolo`: toggle asking."""
        agent = self._agent("/yolo")
        if agent is None:
            return
        agent.set_yolo(not agent.yolo)
        self.say("warning" if agent.yolo else "info", YOLO_ON if agent.yolo else YOLO_OFF)
        self.app.refresh_top_line()

    def run_permissions(self, argument: str) -> None:
        """`/permissions`: list and revoke session grants; `ask` / `allow` set the mode."""
        agent = self._agent("/permissions")
        if agent is None:
            return
        word, _, tool = argument.partition(" ")
        tool = tool.strip()
        if not argument:

            def revoke(revoked: set[str] | None) -> None:
                for name in agent.revoke_grants(revoked or ()):
                    self.say("info", f"revoked: {name} asks again")

            screen = GrantsScreen(agent.grants, permissions=agent.permissions, yolo=agent.yolo)
            self.app.push_screen(screen, revoke)
        elif word in ("ask", "allow") and not tool:
            agent.set_permissions(word)
            self.say("info", f"permissions: {word}")
        elif word == "revoke":
            names = [tool] if tool else sorted(agent.grants)
            agent.revoke_grants(names)
            self.say("info", f"revoked: {', '.join(names) or 'nothing to revoke'}")
        else:
            self.say("warning", PERMISSIONS_USAGE)

    def run_export(self, argument: str) -> None:
        """`/export [file.md]`: the transcript as Markdown."""
        app = self.app
        now = datetime.now()
        path = Path(argument).expanduser() if argument else Path(export_file_name(now))
        if not path.is_absolute():
            path = app.cwd / path
        header = [
            "# mm-tui transcript",
            "",
            f"- model: {app.replay_meta.get('model') or getattr(app.agent, 'model', None) or app.config.model or ''}",
            f"- directory: {app.cwd}",
            f"- exported: {now:%Y-%m-%d %H:%M}",
            "",
            "---",
            "",
        ]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(header) + app.transcript.to_markdown(), encoding="utf-8")
        except OSError as error:
            self.say("error", f"/export failed: {error}")
            return
        self.say("info", EXPORTED.format(path=path))

    def run_quit(self, argument: str) -> None:
        """`/quit`: as Ctrl+Q."""
        self.app.call_later(self.app.action_quit)
