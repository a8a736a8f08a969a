"""Reading a tool's arguments as a small model sends them: often of the wrong type, or missing.

A wrong argument never raises out of a tool (SPEC §1): `ArgumentProblem` carries the one line
that tells the model which field is wrong, and each tool turns it into its output. Where the
intent is unambiguous we accept the common slips (`"12"` for 12, `"true"` for true) instead of
sending a small model into a retry loop.
"""

from __future__ import annotations

from typing import Any


class ArgumentProblem(Exception):
    """A field is missing or of the wrong type; `str(problem)` is the line for the model."""


def argument_map(args: object) -> dict[str, Any]:
    """The arguments as a dict; anything else (a list, None) counts as no argument at all."""
    return args if isinstance(args, dict) else {}


def string_field(args: dict[str, Any], tool: str, field: str) -> str:
    """A required string field."""
    value = args.get(field)
    if not isinstance(value, str):
        raise ArgumentProblem(f'[error: {tool} needs "{field}" (a string)]')
    return value


def integer_field(args: dict[str, Any], tool: str, field: str, default: int = 0) -> int:
    """An optional whole number; `"12"` and `12.0` are read as 12, null as the default."""
    value = args.get(field)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise ArgumentProblem(f'[error: {tool} needs "{field}" (a whole number)]')
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise ArgumentProblem(f'[error: {tool} needs "{field}" (a whole number)]')


def boolean_field(args: dict[str, Any], tool: str, field: str, default: bool = False) -> bool:
    """An optional boolean; `"true"`, `"false"`, 1 and 0 are read as such, null as the default."""
    value = args.get(field)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "1", "0"):
        return value.strip().lower() in ("true", "1")
    raise ArgumentProblem(f'[error: {tool} needs "{field}" (true or false)]')


def lenient_integer(args: object, field: str) -> int:
    """The field as a whole number for a title or a preview, 0 when it is not one."""
    try:
        return integer_field(argument_map(args), "", field)
    except ArgumentProblem:
        return 0


def lenient_string(args: object, field: str) -> str:
    """The field as a string for a title or a preview, "" when it is not one."""
    value = argument_map(args).get(field)
    return value if isinstance(value, str) else ""
