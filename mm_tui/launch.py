"""Opening the window from the command line: build the port, run the app, stop the core."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mm_tui.app import MMApp
from mm_tui.faces.exit_codes import EXIT_CONFIG_ERROR
from mm_tui.keymap import keymap_problems
from mm_tui.window.ports import PortFactory, live_factory, replay_port_factory
from mm_tui.window.project_trust import ProjectTrust

if TYPE_CHECKING:
    from mm_tui.agent.config import Config
    from mm_tui.agent.server_check import FirstRunCheck


def run_app(
    config: Config,
    cwd: Path,
    *,
    resume: Path | str | None = None,
    continue_last: bool = False,
    replay: Path | None = None,
    demo: bool = False,
    reload: Callable[[], Config] | None = None,
    typed: str = "",
) -> int:
    """Open the window and return the exit status (the CLI's entry point). `reload`: the
    config loaded again, as after trusting the project. `typed`: keys typed before
    the window could read them (`support.typeahead`), read before the terminal."""
    if problems := keymap_errors(config):
        for line in problems:
            print(f"mm-tui: {line}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if demo or replay is not None:
        from mm_tui.replay import ReplayError

        try:
            factory = replay_port_factory(config, cwd, None if demo else replay)
        except ReplayError as error:
            print(f"mm-tui: {error}", file=sys.stderr)
            return EXIT_CONFIG_ERROR
        app = MMApp(config, cwd, agent_factory=factory, build_in_worker=False)
    else:
        app = build_app(config, cwd, resume=resume, continue_last=continue_last, reload=reload)
    if typed:
        app.read_typeahead_first(typed)
    try:
        status = app.run()
    finally:
        app.turns.close()
    return status if isinstance(status, int) else app.return_code or 0


def build_app(
    config: Config,
    cwd: Path,
    *,
    resume: Path | str | None = None,
    continue_last: bool = False,
    reload: Callable[[], Config] | None = None,
) -> MMApp:
    """The live window as the CLI opens it (not yet running); it first asks to trust the
    project when its files would change how mm-tui works and `reload` can apply the answer."""
    pick = resume == ""  # `--resume` alone: the picker, once the core is ready

    def factory_for(obeyed: Config) -> PortFactory:
        return live_factory(obeyed, cwd, resume or None, continue_last)

    fresh = not resume and not continue_last  # a resumed session has its own start
    check = (lambda: _first_run_check(config)) if fresh else None
    trust: ProjectTrust | None = None
    if reload is not None:
        from mm_tui.agent.trust_question import trust_question

        question = trust_question(cwd, config.source, config.untrusted)
        trust = ProjectTrust(question, reload, factory_for) if question is not None else None
    return MMApp(
        config,
        cwd,
        agent_factory=factory_for(config),
        first_run=check,
        trust=trust,
        pick_session=pick,
    )


def _first_run_check(config: Config) -> FirstRunCheck:
    """The window's server check, run in the panel's worker (its imports too: urllib, http)."""
    from mm_tui.agent.server_check import first_run_check

    return first_run_check(config)


def keymap_errors(config: Config) -> list[str]:
    """One line per unusable `keymap` entry, named as any config error is (SPEC §2)."""
    if not config.keymap:  # the keys' owners are screens the first frame does not import
        return []
    return [
        f"config error in {config.source} line {bad.line}: key 'keymap.{bad.binding_id}': {bad.keys}"
        for bad in keymap_problems(config.keymap, MMApp.binding_owners())
    ]
