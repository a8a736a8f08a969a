"""The config file's shape as msgspec structs: unknown keys refused, types strict.

A key the file does not set stays UNSET (or None, which YAML writes as an empty value) and
`Config` keeps its default, so SPEC §2's defaults live in one place (`model.Config`).
Each key's words for the person ("a whole number of characters") sit beside its type.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from msgspec import UNSET, Meta, Struct, UnsetType, field

Positive = Annotated[int, Meta(gt=0)]
Fraction = Annotated[float, Meta(ge=0, le=1)]
#: OpenAI's range for `temperature`; NaN and infinity fail it (every request would fail).
Temperature = Annotated[float, Meta(ge=0, le=2)]
#: A bash time limit: at least a second, at most a day (a typo of minutes for seconds fits).
Seconds = Annotated[float, Meta(ge=1, le=86_400)]
NonEmptyList = Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(min_length=1)]


class ServerEntry(Struct, forbid_unknown_fields=True, frozen=True):
    """One entry of `lsp.servers` (SPEC §6): a command line, never a string to split."""

    command: NonEmptyList
    extensions: NonEmptyList
    initializationOptions: dict[str, Any] | None = None  # the YAML key's spelling
    settings: dict[str, Any] | None = None
    rootMarkers: list[str] | None = None  # the YAML key's spelling


class LspSection(Struct, forbid_unknown_fields=True, frozen=True):
    """The `lsp` key: only `servers` for now."""

    servers: dict[str, ServerEntry] | None = None


class PermissionRules(Struct, forbid_unknown_fields=True, frozen=True):
    """`permissions: {allow: [...], ask: [...], deny: [...]}`: rules like `bash(git *)`."""

    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []


class NotificationsSection(Struct, forbid_unknown_fields=True, frozen=True):
    """`notifications: {bell: true, desktop: osc9}` (or `notifications: false`)."""

    bell: bool = True
    desktop: Literal["off", "osc9", "osc777", "both"] = "osc9"


class ConfigFile(Struct, forbid_unknown_fields=True, frozen=True):
    """The top level of a config file; field names are `Config`'s, YAML keys as in mm."""

    base_url: str | None | UnsetType = field(name="baseURL", default=UNSET)
    api_key: str | None | UnsetType = field(name="apiKey", default=UNSET)
    model: str | None | UnsetType = UNSET
    temperature: Temperature | None | UnsetType = UNSET
    top_p: Fraction | None | UnsetType = field(name="topP", default=UNSET)
    top_k: Annotated[int, Meta(ge=0)] | None | UnsetType = field(name="topK", default=UNSET)
    min_p: Fraction | None | UnsetType = field(name="minP", default=UNSET)
    family: (
        Literal["auto", "none", "qwen", "gemma", "mistral", "gpt-oss", "glm", "granite", "phi"]
        | None
        | UnsetType
    ) = UNSET
    context_window: Positive | None | UnsetType = field(name="contextWindow", default=UNSET)
    bash_tool: bool | None | UnsetType = field(name="bashTool", default=UNSET)
    edit_tools: bool | None | UnsetType = field(name="editTools", default=UNSET)
    skills_dir: str | None | UnsetType = field(name="skillsDir", default=UNSET)
    max_output: Positive | None | UnsetType = field(name="maxOutput", default=UNSET)
    preview_lines: Positive | None | UnsetType = field(name="previewLines", default=UNSET)
    permissions: Literal["ask", "allow"] | PermissionRules | None | UnsetType = UNSET
    yolo: bool | None | UnsetType = UNSET
    max_turns: Positive | None | UnsetType = field(name="maxTurns", default=UNSET)
    system_prompt: str | None | UnsetType = field(name="systemPrompt", default=UNSET)
    system_prompt_file: str | None | UnsetType = field(name="systemPromptFile", default=UNSET)
    tool_calls: Literal["auto", "native", "text"] | None | UnsetType = field(
        name="toolCalls", default=UNSET
    )
    auto_compact: Fraction | None | UnsetType = field(name="autoCompact", default=UNSET)
    lsp_servers: LspSection | None | UnsetType = field(name="lsp", default=UNSET)
    max_tool_calls: Positive | None | UnsetType = field(name="maxToolCalls", default=UNSET)
    max_processes: Positive | None | UnsetType = field(name="maxProcesses", default=UNSET)
    bash_timeout: Seconds | None | UnsetType = field(name="bashTimeout", default=UNSET)
    bash_timeout_max: Seconds | None | UnsetType = field(name="bashTimeoutMax", default=UNSET)
    scrub_env: list[str] | None | UnsetType = field(name="scrubEnv", default=UNSET)
    theme: Annotated[str, Meta(min_length=1)] | None | UnsetType = UNSET
    keymap: dict[str, Annotated[str, Meta(min_length=1)]] | None | UnsetType = UNSET
    notifications: bool | NotificationsSection | None | UnsetType = UNSET


#: What a key expects, in the person's words, by dotted key (`*`: any server name).
EXPECTED: dict[str, str] = {
    "baseURL": "a URL string",
    "apiKey": "a string",
    "model": "a string",
    "temperature": "a number",
    "topP": "a fraction between 0 and 1",
    "topK": "a whole number of tokens (0: off)",
    "minP": "a fraction between 0 and 1",
    "family": '"auto", "none", or one of qwen, gemma, mistral, gpt-oss, glm, granite, phi',
    "contextWindow": "a whole number of tokens",
    "bashTool": "true or false",
    "editTools": "true or false",
    "skillsDir": "a directory path",
    "maxOutput": "a whole number of characters",
    "previewLines": "a whole number of lines",
    "permissions": '"ask" or "allow", or rules {allow: [...], ask: [...], deny: [...]}',
    "permissions.allow": "a list of rules like bash(git *) or write_file(src/**)",
    "permissions.ask": "a list of rules like bash(git push *)",
    "permissions.deny": "a list of rules like bash(rm *) or read_file(~/.ssh/**)",
    "maxToolCalls": "a whole number of tool calls",
    "maxProcesses": "a whole number of processes",
    "bashTimeout": "a number of seconds, like 30 or 120",
    "bashTimeoutMax": "a number of seconds, like 600",
    "scrubEnv": "a list of environment variable names or patterns like *_PASSWORD",
    "yolo": "true or false",
    "maxTurns": "a whole number",
    "systemPrompt": "a string",
    "systemPromptFile": "a file path",
    "toolCalls": '"auto", "native" or "text"',
    "autoCompact": "a fraction between 0 and 1",
    "theme": "a theme name, like textual-dark or nord",
    "keymap": "a mapping of binding ids to keys, like app.help: f5",
    "keymap.*": "keys, like ctrl+k or f5,ctrl+h",
    "notifications": "true or false, or {bell: true, desktop: osc9}",
    "notifications.bell": "true or false",
    "notifications.desktop": '"off", "osc9", "osc777" or "both"',
    "lsp": "a mapping with a `servers` key",
    "lsp.servers": "a mapping of server names",
    "lsp.servers.*": "{command: [...], extensions: [...]}",
    "lsp.servers.*.command": "a list of strings, like [pylsp] or [gopls, serve]",
    "lsp.servers.*.extensions": "a list of extensions like [.py]",
    "lsp.servers.*.initializationOptions": "a mapping",
    "lsp.servers.*.settings": "a mapping",
    "lsp.servers.*.rootMarkers": "a list of file names",
}

#: What a key expects when its type is right but its value is out of range.
IN_RANGE: dict[str, str] = {
    "contextWindow": "a positive number",
    "maxOutput": "a positive number",
    "previewLines": "a positive number",
    "maxTurns": "a positive number",
    "maxToolCalls": "a positive number",
    "temperature": "a number from 0 to 2",
    "bashTimeout": "a number of seconds from 1 to 86400 (a day)",
    "bashTimeoutMax": "a number of seconds from 1 to 86400 (a day)",
}
