r"""Per-family defaults for the model families people run at about 12B: which call format to
expect, whether the text protocol serves the model better than native tools, and the sampling
its makers recommend — chosen from the model id, each overridable in the config
(`family`, `temperature`, `topP`, `topK`, `minP`; `toolCalls` set in the file wins too).

| family  | call format expected                               | text mode    | sampling                              | source of the sampling |
|---------|----------------------------------------------------|--------------|---------------------------------------|------------------------|
| qwen    | `<tool_call>{json}</tool_call>`; Qwen3-Coder `<function=…><parameter=…>` | no | temperature 0.7, top_p 0.8, top_k 20, min_p 0 | Qwen3 model cards, "Best Practices", non-thinking mode (huggingface.co/Qwen/Qwen3-8B) |
| gemma   | Gemma 2/3: JSON or a call in the text; Gemma 4 `<\|tool_call>call:name{…}` | Gemma 2/3: their templates have no tool role | temperature 1.0, top_k 64, top_p 0.95, min_p 0 | "According to the Gemma team, the optimal config for inference" (Unsloth's Gemma 3 guide, docs.unsloth.ai) |
| mistral | `[TOOL_CALLS]name[ARGS]{…}` (Mistral Small, Ministral, Devstral) | no | temperature 0.15 | Mistral Small 3.1 / 3.2 model cards: "a relatively low temperature, such as temperature=0.15" |
| gpt-oss | harmony: `<\|channel\|>commentary to=functions.name … <\|message\|>{…}` | no | temperature 1.0, top_p 1.0 | github.com/openai/gpt-oss README, "Recommended Sampling Parameters" |
| glm     | `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` | no | temperature 1.0, top_p 0.95, top_k 40 | zai-org/GLM-4.6 model card (code tasks: top_p 0.95, top_k 40) |
| granite | `<tool_call>{json}</tool_call>` (4.x), `<\|tool_call\|>[…]` (3.x) | no | none: the server's | ibm-granite instruct `generation_config.json` sets no sampling |
| phi     | Phi-4-mini `<\|tool_call\|>[…]<\|/tool_call\|>` (`functools[…]` in vLLM's template) | all but Phi-4-mini: no tool format | none: the server's | `microsoft/Phi-4-mini-instruct` `generation_config.json` sets no sampling |

An id that matches no family keeps today's defaults: native tools (`toolCalls: auto`) and the
server's sampling (or `temperature` when set).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mm_tui.agent.config import Config
from mm_tui.agent.messages import Sampling


@dataclass(frozen=True)
class Family:
    """One family: how its ids look, what it writes, what it prefers, how it samples."""

    name: str
    label: str
    matches: str  # a regex searched in the lower-case model id
    call_format: str
    sampling: Sampling = field(default_factory=Sampling)
    source: str = ""
    #: The ids (regex searched) whose template gives the model no tools: text mode is better.
    text_mode: str = ""


FAMILIES = (
    Family(
        "gpt-oss", "gpt-oss", r"gpt-?oss",
        "harmony (<|channel|>commentary to=functions.name … <|message|>{…})",
        {"temperature": 1.0, "top_p": 1.0},
        "github.com/openai/gpt-oss README, Recommended Sampling Parameters",
    ),
    Family(
        "qwen", "Qwen", r"qwen|qwq",
        "<tool_call>{json}</tool_call> (Qwen3-Coder: <function=…><parameter=…>)",
        {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0},
        "Qwen3 model cards, Best Practices (non-thinking mode)",
    ),
    Family(
        "gemma", "Gemma", r"gemma",
        "Gemma 2/3: JSON or a call in the text; Gemma 4: <|tool_call>call:name{…}",
        {"temperature": 1.0, "top_k": 64, "top_p": 0.95, "min_p": 0.0},
        "the Gemma team's inference config, as Unsloth's Gemma 3 guide quotes it",
        text_mode=r"gemma-?[23]",
    ),
    Family(
        "mistral", "Mistral/Devstral", r"devstral|mistral|ministral|magistral|codestral",
        "[TOOL_CALLS]name[ARGS]{…}",
        {"temperature": 0.15},
        "Mistral Small 3.1/3.2 model cards: temperature=0.15",
    ),
    Family(
        "glm", "GLM", r"glm",
        "<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>",
        {"temperature": 1.0, "top_p": 0.95, "top_k": 40},
        "zai-org/GLM-4.6 model card (code tasks)",
    ),
    Family(
        "granite", "Granite", r"granite",
        "<tool_call>{json}</tool_call> (Granite 3: <|tool_call|>[…])",
        {},
        "ibm-granite generation_config.json sets no sampling",
    ),
    Family(
        "phi", "Phi", r"(?<![a-z])phi",
        "Phi-4-mini: <|tool_call|>[…]<|/tool_call|>",
        {},
        "microsoft/Phi-4-mini-instruct generation_config.json sets no sampling",
        text_mode=r"phi(?!-?4-?mini)",
    ),
)  # fmt: skip
BY_NAME = {family.name: family for family in FAMILIES}


def family_of(model: str, config: Config | None = None) -> Family | None:
    """The family a model id belongs to; `family` in the config forces one, or `none`."""
    forced = config.family if config is not None else "auto"
    if forced == "none":
        return None
    if forced != "auto":
        return BY_NAME.get(forced)
    wanted = model.lower()
    return next((f for f in FAMILIES if re.search(f.matches, wanted)), None)


@dataclass(frozen=True)
class ChosenDefaults:
    """What a session uses for one model: the family (if any), text mode, sampling."""

    family: Family | None
    text_mode: bool
    sampling: Sampling
    overridden: tuple[str, ...]  # the sampling keys the config set


def defaults_for(model: str, config: Config) -> ChosenDefaults:
    """The family's defaults for `model`, with what the config sets winning."""
    family = family_of(model, config)
    overrides: Sampling = {}
    if config.temperature is not None:
        overrides["temperature"] = config.temperature
    if config.top_p is not None:
        overrides["top_p"] = config.top_p
    if config.top_k is not None:
        overrides["top_k"] = config.top_k
    if config.min_p is not None:
        overrides["min_p"] = config.min_p
    sampling = (family.sampling if family is not None else Sampling()) | overrides
    text_mode = bool(
        family is not None
        and family.text_mode
        and re.search(family.text_mode, model.lower())
        and config.tool_calls == "auto"
        and "toolCalls" not in config.file_keys
    )
    return ChosenDefaults(family, text_mode, sampling, tuple(overrides))


def describe(model: str, config: Config) -> str:
    """One line for `mm-tui doctor`: the family and the defaults chosen."""
    chosen = defaults_for(model, config)
    family = chosen.family
    shown = ", ".join(f"{k} {v:g}" for k, v in chosen.sampling.items()) or "the server's"
    if family is None:
        return f"model family: none known for {model} — native tools, sampling {shown}"
    mode = "tools described in the prompt" if chosen.text_mode else "native tools"
    set_by = f"; set in the config: {', '.join(chosen.overridden)}" if chosen.overridden else ""
    return (
        f"model family: {family.label} — expects {family.call_format}; {mode}; "
        f"sampling {shown} ({family.source}{set_by})"
    )
