"""The `keymap` section of the config: keys remapped by binding id, checked first.

Textual's `App.set_keymap` applies a keymap as given: an unknown id is ignored, a typo in a
key binds nothing, and a key given to two actions silently takes one of them away. mm-tui
checks the section before the window opens, so each mistake is one line naming the file, the
line and the entry (and start-up stops, as for any bad config, SPEC §2):
- an id no binding has;
- a key Textual cannot name (`ctrl+pp`);
- a key given to two actions that are active together (the same widget or screen, or the
  window's own keys), whether both come from the keymap or one is a default;
- a bare character for a window-wide key: it would fight typing in the prompt;
- a new key for a key that always wins (Esc, Ctrl+Q, PgUp: priority bindings) that the prompt
  edits with or a widget or screen binds: it would be taken from them everywhere.
The help page shows the keys in effect (`effective_keys`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from textual.app import App
from textual.binding import Binding
from textual.keys import (
    KEY_NAME_REPLACEMENTS,
    KEY_TO_UNICODE_NAME,
    REPLACED_KEYS,
    Keys,
    key_to_character,
)

from mm_tui.agent.config.model import KeyChoice

MODIFIERS = ("ctrl", "alt", "shift", "meta", "super", "hyper")
_NAMED = {key.value.rpartition("+")[2] for key in Keys}
_LABELS = {
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "escape": "Esc",
    "question_mark": "?",
    "ctrl": "Ctrl",
    "alt": "Alt",
    "shift": "Shift",
    "meta": "Meta",
    "super": "Super",
    "hyper": "Hyper",
}


@dataclass(frozen=True)
class OwnedBinding:
    """A binding with an id and the class whose keys it is among (a widget, a screen, the app)."""

    owner: type
    binding: Binding

    @property
    def id(self) -> str:
        return self.binding.id or ""


def bindings_with_ids(owners: Iterable[type]) -> list[OwnedBinding]:
    """Every binding with an id of these classes (and of their bases: Textual merges them)."""
    found: list[OwnedBinding] = []
    for owner in owners:
        for klass in reversed(owner.__mro__):
            for binding in vars(klass).get("BINDINGS", ()):
                if isinstance(binding, Binding) and binding.id:
                    found.append(OwnedBinding(owner, binding))
    return found


def _normal(key: str) -> str:
    """Textual's spelling of one key: `?` is `question_mark`, `/` is `slash`."""
    key = key.strip()
    if len(key) != 1 or key.isalnum():
        return key
    try:
        name = unicodedata.name(key).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return key
    return KEY_NAME_REPLACEMENTS.get(name, name)


def _split(keys: str) -> list[str]:
    return [_normal(key) for key in keys.split(",") if key.strip()]


def is_key(key: str) -> bool:
    """Whether Textual can name `key` (`ctrl+k`, `f5`, `pageup`, `question_mark`, `x`)."""
    *modifiers, name = key.split("+")
    if any(modifier not in MODIFIERS for modifier in modifiers) or not name:
        return False
    if len(name) == 1 or name in _NAMED or name in REPLACED_KEYS:
        return True
    try:
        unicodedata.lookup(KEY_TO_UNICODE_NAME.get(name, name.replace("_", " ").upper()))
    except KeyError:
        return False
    return True


def key_label(key: str) -> str:
    """`ctrl+k` -> `Ctrl+K`, `pageup` -> `PgUp`, `f5` -> `F5`: as the help page writes keys."""
    parts = key.split("+")
    shown = [_LABELS.get(part, part) for part in parts[:-1]]
    name = parts[-1]
    if name in _LABELS:
        last = _LABELS[name]
    elif len(name) == 1:
        last = name.upper() if shown else name
    elif name[:1] == "f" and name[1:].isdigit():
        last = name.upper()
    else:
        last = name.capitalize()
    return "+".join([*shown, last])


def keymap_problems(choices: Sequence[KeyChoice], owners: Iterable[type]) -> list[KeyChoice]:
    """The entries that cannot be used, each with its reason in `keys` (`line` kept)."""
    bindings = bindings_with_ids(owners)
    known = {owned.id for owned in bindings}
    asked = {choice.binding_id: choice for choice in choices}
    problems: list[KeyChoice] = []
    for choice in choices:
        if choice.binding_id not in known:
            reason = f"unknown binding id (known: {', '.join(sorted(known))})"
            problems.append(KeyChoice(choice.binding_id, reason, choice.line))
            continue
        keys = _split(choice.keys)
        bad = [key for key in keys if not is_key(key)]
        if bad or not keys:
            reason = f"{choice.keys!r} is not a key (keys look like ctrl+k, f5, pageup, x)"
            problems.append(KeyChoice(choice.binding_id, reason, choice.line))
            continue
        owned_here = [owned for owned in bindings if owned.id == choice.binding_id]
        if any(issubclass(owned.owner, App) for owned in owned_here):
            typed = [key for key in keys if "+" not in key and key_to_character(key) is not None]
            if typed:
                reason = f"{typed[0]!r} is typed in the prompt: give ctrl+…, alt+… or a key like F5"
                problems.append(KeyChoice(choice.binding_id, reason, choice.line))
                continue
        if any(owned.binding.priority for owned in owned_here):
            taken = _taken_by_priority(keys, owned_here[0], bindings)
            if taken is not None:
                problems.append(KeyChoice(choice.binding_id, taken, choice.line))
                continue
        if (other := _clash(choice.binding_id, keys, bindings, asked)) is not None:
            key, rival = other
            reason = f"{key} is also {rival}'s key: give one of them another key"
            problems.append(KeyChoice(choice.binding_id, reason, choice.line))
    return problems


#: Keys the prompt edits with: a window-wide key that always wins must not take them.
EDITING_KEYS = frozenset(
    {"enter", "tab", "backspace", "delete", "left", "right", "up", "down", "home", "end"}
)


def _taken_by_priority(
    keys: list[str], owned: OwnedBinding, bindings: list[OwnedBinding]
) -> str | None:
    """Why a window-wide key that always wins (a priority binding, like Esc or Ctrl+Q) may not
    be `keys`: it would take a key from the prompt or from a widget's own binding."""
    defaults = set(_split(owned.binding.key))
    for key in keys:
        if key in defaults:
            continue
        if key in EDITING_KEYS:
            return f"{key} would be taken from the prompt (this key wins everywhere)"
        for other in bindings:
            if other.owner is not owned.owner and key in _split(other.binding.key):
                return f"{key} would be taken from {other.id} (this key wins everywhere)"
    return None


def _clash(
    binding_id: str,
    keys: list[str],
    bindings: list[OwnedBinding],
    asked: Mapping[str, KeyChoice],
) -> tuple[str, str] | None:
    """A key of `binding_id` that another binding active beside it also has, after the keymap."""
    owners = {owned.owner for owned in bindings if owned.id == binding_id}
    for owned in bindings:
        if owned.id == binding_id or owned.owner not in owners:
            continue
        rival = asked.get(owned.id)
        rival_keys = _split(rival.keys) if rival is not None else _split(owned.binding.key)
        for key in keys:
            if key in rival_keys:
                return key, owned.id
    return None


def effective_keys(owners: Iterable[type], keymap: Mapping[str, str]) -> dict[str, str]:
    """Binding id -> its keys as labels (`Ctrl+K, F5`), the keymap applied."""
    shown: dict[str, str] = {}
    for owned in bindings_with_ids(owners):
        keys = _split(keymap.get(owned.id) or owned.binding.key)
        shown[owned.id] = ", ".join(key_label(key) for key in keys)
    return shown
