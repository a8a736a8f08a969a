"""`mm-tui doctor`: the checks a first run needs, printed one per line; non-zero on a problem.

Server, model, context window, tool support (from `agent.server_check`, shared with the
window's first screen); then what only the model tells (`agent.server_probe`: a request with a
dummy tool, a short answer's pace, the context the server loaded it with); then the language
servers on the PATH and the config files found.
It reads the same flags and config as the window, so what it says is what the window will do.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from mm_tui.agent.config import Config, config_candidates

if TYPE_CHECKING:  # `mm-tui` builds every subcommand's flags: the window need not load urllib
    from mm_tui.agent.server_check import Finding

EXIT_PROBLEM = 1
EXIT_CONFIG_ERROR = 2  # as the window's
MARKS = {"ok": "✓", "warning": "!", "problem": "✗"}
LSP_FOUND = "language server {name}: {path}"
LSP_MISSING = "language server {name}: `{command}` is not on the PATH (the lsp tool skips it)"
LSP_NONE = "no language server on the PATH — the lsp tool is off"
CONFIG_USED = "config {path} (used)"
CONFIG_SHADOWED = "config {path} (found, not used: an earlier one wins)"
CONFIG_NONE = "no config file (defaults, environment and flags)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--base-url, --model and --config are shared; --no-probe skips asking the model."""
    parser.add_argument(
        "--no-probe",
        action="store_true",
        help="do not send the model the two short probe requests (tools, speed)",
    )


def language_server_findings(
    config: Config, which: Callable[[str], str | None] = shutil.which
) -> list[Finding]:
    from mm_tui.agent.server_check import Finding

    """One line per configured (or default) server: found where, or not on the PATH."""
    from mm_tui.lsp.defaults import default_servers, install_line

    specs = config.lsp_servers if config.lsp_servers is not None else default_servers(which)
    findings = []
    for spec in specs:
        path = which(spec.command[0])
        if path:
            findings.append(Finding("lsp", "ok", LSP_FOUND.format(name=spec.name, path=path)))
        else:
            command = spec.command[0]
            text = LSP_MISSING.format(name=spec.name, command=command)
            findings.append(Finding("lsp", "warning", text, install_line(command) or ""))
    if specs and all(f.level == "warning" for f in findings):
        findings.append(Finding("lsp", "warning", LSP_NONE))
    return findings


def config_findings(config: Config, cwd: Path, env: Mapping[str, str]) -> list[Finding]:
    from mm_tui.agent.server_check import Finding

    """The config file used, and the candidates found but shadowed by it."""
    used = config.source
    findings = []
    if used is not None:
        findings.append(Finding("config", "ok", CONFIG_USED.format(path=used)))
    for path in config_candidates(cwd, env):
        if path.exists() and (used is None or path.resolve() != Path(used).resolve()):
            if used is None:
                findings.append(Finding("config", "ok", CONFIG_USED.format(path=path)))
                used = path
            else:
                findings.append(Finding("config", "ok", CONFIG_SHADOWED.format(path=path)))
    if not findings:
        findings.append(Finding("config", "ok", CONFIG_NONE))
    return findings


def live_findings(config: Config, model: str, ollama: bool, context: Finding) -> list[Finding]:
    """What only asking the model tells: tools taken and used, the pace of writing, and the
    context the server loaded it with (after the probe loaded it)."""
    from mm_tui.agent.server_check import Finding
    from mm_tui.agent.server_probe import probe_speed, probe_tools, served_context

    findings = [probe_tools(config, model, ollama=ollama), probe_speed(config, model)]
    expected = config.context_window or _tokens_in(context.text)
    findings.append(served_context(config, model, expected))
    if ollama and not config.context_window:  # the probe loaded it: Ollama now says its own
        from mm_tui.agent.context import discover_context_window

        loaded = discover_context_window(config.base_url, model)
        if loaded.note:
            findings.append(Finding("context", "warning", loaded.note))
    return findings


def _tokens_in(text: str) -> int:
    """The number of a `context window N tokens (…)` line."""
    words = text.split()
    return next((int(w) for w in words if w.isdigit()), 0)


def run_checks(
    config: Config,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    which: Callable[[str], str | None] = shutil.which,
    *,
    probe: bool = True,
) -> list[Finding]:
    """Every check, in the order printed; `probe` asks the model itself (a short request
    with a dummy tool, and a short answer), as a turn would."""
    from mm_tui.agent.model_family import describe
    from mm_tui.agent.server_check import (
        TOOLS_UNKNOWN,
        Finding,
        check_context,
        check_server,
        check_tools,
    )

    report = check_server(config)
    findings = list(report.findings)
    if report.model:
        context = check_context(config, report.model)
        findings.append(context)
        tools = check_tools(config, report.model)
        if not (probe and tools.text == TOOLS_UNKNOWN):  # the probe will say
            findings.append(tools)
        findings.append(Finding("model", "ok", describe(report.model, config)))
        if probe:
            findings += live_findings(config, report.model, report.ollama, context)
    findings += language_server_findings(config, which)
    findings += config_findings(config, cwd, os.environ if env is None else env)
    return findings


def print_findings(findings: list[Finding], out: TextIO) -> None:
    for finding in findings:
        print(f"{MARKS[finding.level]} {finding.text}", file=out)
        if finding.fix:
            print(f"    run: {finding.fix}", file=out)


def run(args: argparse.Namespace, load_config: Callable[[Path], Config]) -> int:
    """Print the checks; exit 1 when any is a problem (a warning is not), 2 on a bad config."""
    from mm_tui.agent.config import ConfigError

    cwd = Path.cwd()
    try:
        config = load_config(cwd)
    except ConfigError as exc:
        print(f"mm-tui: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    findings = run_checks(config, cwd, probe=not getattr(args, "no_probe", False))
    print_findings(findings, sys.stdout)
    return EXIT_PROBLEM if any(f.level == "problem" for f in findings) else 0


def main(argv: list[str]) -> int:
    """`mm-tui doctor [--base-url URL] [--model NAME] [--config PATH]`."""
    from mm_tui.agent.config import load_config

    parser = argparse.ArgumentParser(
        prog="mm-tui doctor",
        description="Check the server, model, context, tools, language servers and config.",
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="the YAML configuration file")
    parser.add_argument("--model", help="the model to check (default: the first the server lists)")
    parser.add_argument("--base-url", metavar="URL", help="the OpenAI-compatible endpoint")
    add_arguments(parser)
    args = parser.parse_args(argv)

    def load(cwd: Path) -> Config:
        overrides = {"model": args.model, "base_url": args.base_url}
        return load_config(args.config, cwd=cwd, overrides=overrides)

    return run(args, load)
