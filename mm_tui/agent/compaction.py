"""/compact: the conversation's middle replaced by a summary the model writes itself.

Kept word for word: the system prompt, the first user message (the task as the person said it)
and the last turns. A turn is cut only at user messages, so a tool call is never separated from
its result. When the summary cannot be had, the middle is dropped instead, and that is said.
Nothing is deleted from the session file: a marker says what the model is sent from then on.
`compact` runs it against a conversation: plan, ask the model, replace, say what happened.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mm_tui.agent.events import WAITING_FOR_MODEL, Notice
from mm_tui.agent.messages import ChatRequest, Message
from mm_tui.agent.model_client import Interrupted, ModelFault
from mm_tui.agent.stream import StreamAssembler

if TYPE_CHECKING:
    from mm_tui.agent.conversation import Conversation
    from mm_tui.agent.model_client import ModelClient
    from mm_tui.agent.turn_signals import TurnSignals

log = logging.getLogger(__name__)

SUMMARY_INSTRUCTIONS = """\
You are summarising a coding session so that it can continue without the full history.
Write the summary with exactly these six headings, each followed by short bullet points
(write "none" when a section is empty). Keep file paths, names, commands and error messages
exactly as they appear.

## Goal
## Constraints
## Files touched
## Done
## Errors
## Next step
"""
SUMMARY_PREFIX = "[Summary of the earlier conversation, written by /compact]\n\n"
DROPPED_TEXT = "[{n} earlier message(s) were dropped to fit the context window]"
TOOL_OUTPUT_IN_SUMMARY = 1500  # characters of each tool output shown to the summariser


@dataclass(frozen=True)
class CompactionPlan:
    """How a history splits: what stays word for word, and the middle to summarise."""

    head: list[Message]  # the system prompt and the first user message
    middle: list[Message]
    tail: list[Message]  # the last turns, whole

    def summary_note(self, summary: str) -> Message:
        """The message standing for the middle once summarised."""
        return {"role": "assistant", "content": SUMMARY_PREFIX + summary.strip()}

    def dropped_note(self) -> Message:
        """The message standing for the middle when no summary could be had."""
        return {"role": "assistant", "content": DROPPED_TEXT.format(n=len(self.middle))}

    def with_summary(self, summary: str) -> list[Message]:
        return [*self.head, self.summary_note(summary), *self.tail]

    def with_middle_dropped(self) -> list[Message]:
        return [*self.head, self.dropped_note(), *self.tail]


#: After "N of W tokens used" when automatic compaction finds only the current turn to keep.
TURN_FILLS_CONTEXT = (
    " by this turn alone: nothing older to compact, so the server may cut the turn's start "
    "(a larger context window helps)"
)


def split_turns(
    messages: list[Message],
) -> tuple[list[Message], list[list[Message]]]:
    """The leading system messages, then the turns: each starts at a user message."""
    lead: list[Message] = []
    turns: list[list[Message]] = []
    for message in messages:
        if message["role"] == "user":
            turns.append([message])
        elif turns:
            turns[-1].append(message)
        else:
            lead.append(message)
    return lead, turns


#: Messages a summary must replace for compaction to shorten the conversation at all.
MIN_MIDDLE = 2


def plan_compaction(messages: list[Message], keep_last: int = 2) -> CompactionPlan | None:
    """The plan keeping `keep_last` turns (fewer if need be), or None when nothing can go."""
    lead, turns = split_turns(messages)
    for keep in range(keep_last, 0, -1):
        if len(turns) < keep + 1:
            continue
        first, *rest = turns
        middle_turns = rest[: len(rest) - keep] if keep else rest
        middle = first[1:] + [m for turn in middle_turns for m in turn]
        if len(middle) < MIN_MIDDLE:  # one message for one note shortens nothing
            continue
        tail = [m for turn in rest[len(rest) - keep :] for m in turn]
        return CompactionPlan(head=[*lead, first[0]], middle=middle, tail=tail)
    return None


def transcript_for_summary(middle: list[Message]) -> str:
    """The middle of the conversation as plain text for the summariser."""
    lines: list[str] = []
    for message in middle:
        role = message["role"]
        content = message.get("content") or ""
        if role == "tool":
            if len(content) > TOOL_OUTPUT_IN_SUMMARY:
                cut = len(content) - TOOL_OUTPUT_IN_SUMMARY
                content = f"{content[:TOOL_OUTPUT_IN_SUMMARY]}\n[... {cut} more characters]"
            lines.append(f"TOOL RESULT:\n{content}")
            continue
        if content:
            lines.append(f"{role.upper()}:\n{content}")
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            lines.append(f"TOOL CALL {function.get('name')}: {function.get('arguments')}")
    return "\n\n".join(lines)


def summary_request(model: str, middle: list[Message]) -> ChatRequest:
    """The chat request that asks the same model for the summary (no tools)."""
    return {
        "model": model,
        "messages": [
            {"role": "system", "content": SUMMARY_INSTRUCTIONS},
            {"role": "user", "content": transcript_for_summary(middle)},
        ],
    }


def compact(
    conversation: Conversation, client: ModelClient, signals: TurnSignals, model: str
) -> bool:
    """Summarise the conversation's middle with `model` and keep the result (saved); said as
    notices. Returns False when there was nothing to compact."""
    plan = plan_compaction(conversation.messages)
    if plan is None:
        signals.sink(Notice("info", "nothing to compact yet: the conversation is short"))
        return False
    before = len(conversation.messages)
    signals.set_spinner(WAITING_FOR_MODEL)
    summary = StreamAssembler()

    def take(chunks: list[dict[str, Any]]) -> bool:
        for chunk in chunks:
            summary.feed(chunk)
        return False  # read to the end

    try:
        client.stream(summary_request(model, plan.middle), signals.cancel, take)
        text = summary.text.strip()
        failure = "" if text else "the model returned an empty summary"
    except ModelFault as fault:
        log.debug("the summary request failed", exc_info=True)
        text, failure = "", fault.message
    except Interrupted:
        text, failure = "", "interrupted"
    if text:
        conversation.record_compaction(len(plan.head), len(plan.middle), plan.summary_note(text))
        signals.sink(
            Notice(
                "info",
                f"compacted {len(plan.middle)} message(s) into a summary "
                f"({before} → {len(conversation.messages)} messages)",
            )
        )
        return True
    message = (
        f"compaction failed ({failure}) — dropped the {len(plan.middle)} oldest message(s) instead"
    )
    conversation.add_error("compact", message)
    conversation.record_compaction(len(plan.head), len(plan.middle), plan.dropped_note())
    signals.sink(Notice("warning", message))
    return True
