"""The config file's shape, derived from the settings `Config` declares (`model.setting`):
each key's type with its bounds, for msgspec to check strictly, and the words a wrong value
is told (a `Meta` description beside the type it describes).

The four settings whose value has a shape of its own (`Setting.shaped`) are written here as
msgspec structs (unknown keys refused), their keys' words beside their types.
"""

from __future__ import annotations

import functools
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from msgspec import Meta, Struct

from mm_tui.agent.config.model import Config, Desktop, Setting, settings


def words(text: str) -> Meta:
    """What a value of this type is, in the person's words (`expected {text}, got ...`)."""
    return Meta(description=text)


Rules = Annotated[list[str], words("a list of rules like bash(git *) or write_file(src/**)")]
NonEmptyList = list[Annotated[str, Meta(min_length=1)]]


class ServerEntry(Struct, forbid_unknown_fields=True, frozen=True):
    """One entry of `lsp.servers` (SPEC §6): a command line, never a string to split."""

    command: Annotated[
        NonEmptyList, Meta(min_length=1), words("a list of strings, like [pylsp] or [gopls, serve]")
    ]
    extensions: Annotated[
        NonEmptyList, Meta(min_length=1), words("a list of extensions like [.py]")
    ]
    initializationOptions: Annotated[dict[str, Any], words("a mapping")] | None = None  # noqa: N815
    settings: Annotated[dict[str, Any], words("a mapping")] | None = None
    rootMarkers: Annotated[list[str], words("a list of file names")] | None = None  # noqa: N815


class LspSection(Struct, forbid_unknown_fields=True, frozen=True):
    """The `lsp` key: only `servers` for now."""

    servers: (
        Annotated[
            dict[str, Annotated[ServerEntry, words("{command: [...], extensions: [...]}")]],
            words("a mapping of server names"),
        ]
        | None
    ) = None


class PermissionRules(Struct, forbid_unknown_fields=True, frozen=True):
    """`permissions: {allow: [...], ask: [...], deny: [...]}`: rules like `bash(git *)`."""

    allow: Rules = []
    ask: Annotated[list[str], words("a list of rules like bash(git push *)")] = []
    deny: Annotated[
        list[str], words("a list of rules like bash(rm *) or read_file(~/.ssh/**)")
    ] = []


class NotificationsSection(Struct, forbid_unknown_fields=True, frozen=True):
    """`notifications: {bell: true, desktop: osc9}` (or `notifications: false`)."""

    bell: Annotated[bool, words("true or false")] = True
    desktop: Annotated[Desktop, words('"off", "osc9", "osc777" or "both"')] = "osc9"


#: The file's shape of each shaped setting, by YAML key (`validation` reads them).
SHAPES: dict[str, Any] = {
    "permissions": Literal["ask", "allow"] | PermissionRules,
    "lsp": LspSection,
    "keymap": dict[
        str, Annotated[str, Meta(min_length=1), words("keys, like ctrl+k or f5,ctrl+h")]
    ],
    "notifications": bool | NotificationsSection,
}


@functools.cache
def file_types() -> dict[str, Any]:
    """Each top-level key's type in the file, by YAML key, in `Config`'s order: the field's
    type (or its shape, or its choices) with its bounds; null (an empty value) leaves the
    setting as it is."""
    hints = get_type_hints(Config)
    return {declared.key: _file_type(declared, hints[name]) for name, declared in settings()}


def _file_type(declared: Setting, hint: Any) -> Any:
    if declared.shaped:
        base = SHAPES[declared.key]
    elif declared.choices:
        base = Literal[declared.choices]
    elif get_origin(hint) in (Union, types.UnionType):  # `int | None`: null is added below
        members = [m for m in get_args(hint) if m is not type(None)]
        base = Union[tuple(members)]  # noqa: UP007
    else:
        base = hint
    bounds = [
        *([Meta(gt=declared.above)] if declared.above is not None else []),
        *([Meta(ge=declared.at_least)] if declared.at_least is not None else []),
        *([Meta(le=declared.at_most)] if declared.at_most is not None else []),
        *([Meta(min_length=1)] if declared.not_empty else []),
    ]
    if bounds:
        base = Annotated[(base, *bounds)]
    return Annotated[base | None, words(declared.expected)]
