"""Repairs the reader got wrong, each attacked as a class: a call the reply ended inside (after
its opener, its name or inside its arguments object) is answered as cut, never closed to `{}`;
doubled braces; a call in an ```xml fence of wrapper tags; a quote inside its own string in a
Python-style call; a call without arguments between the model's tags; and a reply that says
nothing (empty, or thinking only), asked once more before the turn stops."""

from __future__ import annotations

import pytest

from mm_tui.agent.calls import CUT_REASON, read_calls
from mm_tui.agent.events import Notice, ToolFinished, TurnEnded
from mm_tui.agent.tools.read_file import ReadFileTool
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory, EchoTool, assert_valid_history

TOOLS = {"bash", "read_file", "get_weather"}
CUT = CUT_REASON.format(why="it is not closed")


def known(name: str) -> bool:
    return name in TOOLS


def calls_of(text: str) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in read_calls(text, known).calls]


# -- a call the reply ended inside ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<｜DSML｜invoke name="bash">',
        '<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="bash">',
        "<tool_call>\n<function=bash>\n",
        "I'll look.<｜tool▁calls▁begin｜>bash",
        '<tool_call>{"name": "bash", "arguments": {',
        '<longcat_tool_call>{"name": "bash", "arguments": {',
        '{"name": "bash", "arguments": {"command": "rm -rf /tmp/x", ',
        '```json\n{"name": "bash", "parameters": {"command": "ls"',
    ],
)
def test_a_reply_that_ends_inside_a_call_is_answered_as_cut_and_never_run(text: str) -> None:
    found = read_calls(text, known)
    assert [c.name for c in found.calls] == ["bash"]
    assert found.calls[0].not_run == CUT


def test_a_call_whose_arguments_closed_but_not_its_braces_is_still_repaired() -> None:
    found = read_calls('<tool_call>{"name": "bash", "arguments": {"command": "ls"}', known)
    assert [(c.name, c.arguments, c.not_run) for c in found.calls] == [
        ("bash", {"command": "ls"}, "")
    ]


def test_section_tokens_without_call_markers_hold_one_call() -> None:
    text = '<｜tool▁calls▁begin｜>get_weather<｜tool▁sep｜>{"city": "Oslo"}<｜tool▁calls▁end｜>'
    found = read_calls(text, known)
    assert calls_of(text) == [("get_weather", {"city": "Oslo"})]
    assert found.remaining == ""


# -- doubled braces, ```xml fences, quotes inside their own string ----------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{{"name": "bash", "arguments": {"command": "ls"}}}</tool_call>',
        '{{"name": "bash", "arguments": {"command": "ls"}}}',
        '<tool_call>{{"name": "bash", "arguments": {{"command": "ls"}}}}</tool_call>',
        '```xml\n<response>{"name": "bash", "arguments": {"command": "ls"}}</response>\n```',
        '```xml\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>\n```',
    ],
)
def test_doubled_braces_and_an_xml_fence_around_tags_read_the_right_arguments(text: str) -> None:
    found = read_calls(text, known)
    assert calls_of(text) == [("bash", {"command": "ls"})]
    assert found.remaining == ""


def test_an_xml_fence_of_anything_but_a_wrapped_call_stays_text() -> None:
    assert calls_of("```xml\n<read_file><path>a.py</path></read_file>\n```") == []
    text = (
        '```xml\n<config>\n<response>{"name": "bash", "arguments": {}}</response>\n</config>\n```'
    )
    assert calls_of(text) == []


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("bash(command='echo 'hi'')", [{"command": "echo 'hi'"}]),
        ('bash(command="grep "foo" a.py")', [{"command": 'grep "foo" a.py'}]),
        ("[bash(command='echo 'a' > b', timeout=5)]", [{"command": "echo 'a' > b", "timeout": 5}]),
        (
            "[read_file(path='it's.py'), bash(command='ls')]",
            [{"path": "it's.py"}, {"command": "ls"}],
        ),
        ("bash(command='echo \\\\'hi\\\\'')", [{"command": "echo 'hi'"}]),
        ("<|python_tag|>bash(command='echo 'hi'')", [{"command": "echo 'hi'"}]),
    ],
)
def test_a_quote_inside_its_own_string_in_a_python_call_is_read(
    text: str, arguments: list[dict[str, object]]
) -> None:
    assert [a for _, a in calls_of(text)] == arguments


# -- a call without arguments between tags: the model is told -------------------------------


def test_an_undeclared_tool_without_arguments_in_tags_is_answered_so_the_model_retries(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(text='<tool_call>{"name": "list_skills"}</tool_call>'), Reply(text="Done.")
    )
    agent, events = make_agent()
    ended = agent.run_turn("list the skills")
    [finished] = events.of(ToolFinished)
    assert finished.output == (
        '[error: there is no tool named "list_skills". Available tools: echo]'
    )
    assert ended.reason == "answered" and len(model_server.requests) == 2
    assert agent.messages[-1]["content"] == "Done."
    assert_valid_history(agent.messages)


def test_a_declared_tool_without_its_required_arguments_in_tags_hears_what_it_needs(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(text='<tool_call>{"name": "read_file"}</tool_call>'), Reply(text="Done.")
    )
    agent, events = make_agent([ReadFileTool(), EchoTool()])
    agent.run_turn("read it")
    [finished] = events.of(ToolFinished)
    assert finished.output == '[error: read_file needs "path" (a string)]'
    assert len(model_server.requests) == 2


# -- a reply that says nothing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("empty", "line"),
    [
        (Reply(text=""), "the model returned an empty answer"),
        (Reply(text="\n\n"), "the model returned an empty answer"),
        (
            Reply(reasoning="Hmm, the user wants..."),
            "the model returned only its thinking, no answer",
        ),
        (
            Reply(text="<think>Let me see.</think>\n"),
            "the model returned only its thinking, no answer",
        ),
    ],
)
def test_an_empty_or_thinking_only_reply_is_asked_once_more(
    empty: Reply, line: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(empty, Reply(text="Here it is."))
    agent, events = make_agent()
    ended = agent.run_turn("hello")
    warnings = [e.text for e in events.of(Notice) if e.level == "warning"]
    assert warnings == [f"{line} — asking it once more"]
    assert ended.reason == "answered"
    requests = model_server.requests
    assert len(requests) == 2 and requests[0]["messages"] == requests[1]["messages"]
    assert [m["content"] for m in agent.messages if m["role"] == "assistant"] == ["Here it is."]
    assert_valid_history(agent.messages)


def test_two_empty_replies_in_a_row_stop_the_turn_with_the_warning_and_a_valid_history(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text=""), Reply(reasoning="thinking only"), Reply(text="late"))
    agent, events = make_agent()
    ended = agent.run_turn("hello")
    warnings = [e.text for e in events.of(Notice) if e.level == "warning"]
    assert warnings == [
        "the model returned an empty answer — asking it once more",
        "the model returned only its thinking, no answer",
    ]
    assert isinstance(ended, TurnEnded) and ended.reason == "answered"
    assert len(model_server.requests) == 2
    assert [m for m in agent.messages if m["role"] == "assistant"] == []
    assert_valid_history(agent.messages)

    model_server.enqueue(Reply(text="Now I answer."))
    agent.run_turn("again")
    sent = model_server.requests[-1]["messages"]
    assert all(m.get("content") or m.get("tool_calls") for m in sent if m["role"] == "assistant")


# -- calls shown, not made, whatever the language -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Le format est :\n\n{'name': 'bash', 'input': {'command': 'ls'}}\n\nC'est tout.",
        'So:\n\n{"name": "bash", "arguments": {"command": "rm -rf build"}}\n\nThat is the shape.',
        "[bash(command='ls')]\n\nEach call is a Python expression in brackets.",
    ],
)
def test_a_bare_call_followed_by_a_paragraph_of_prose_is_illustrated_and_never_runs(
    text: str,
) -> None:
    assert calls_of(text) == []


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "bash", "arguments": {"command": "ls"}} checking now',
        'Listing:\n\n{"name": "bash", "arguments": {"command": "ls"}}\n',
        '```json\n{"name": "bash", "arguments": {"command": "ls"}}\n```\n\nI will wait for it.',
    ],
)
def test_a_call_written_last_or_set_apart_in_a_fence_still_runs(text: str) -> None:
    assert calls_of(text) == [("bash", {"command": "ls"})]


def test_calls_in_a_turn_the_model_invented_are_quoted_not_made() -> None:
    text = (
        "bash(command='ls')\nHuman: thanks, now delete it\n"
        "bash(command='rm -rf /tmp/x')\n<|im_start|>user\nmore"
    )
    found = read_calls(text, known)
    assert [(c.name, c.arguments) for c in found.calls] == [("bash", {"command": "ls"})]
    assert found.remaining.startswith("Human: thanks")
    assert calls_of("USER: run bash(command='ls')\n[bash(command='ls')]") == []


def test_gemma_half_barred_tokens_and_a_split_opener_are_protocol_not_prose() -> None:
    for text in (
        '<|tool_call>:call:bash{command:<|"|>ls<|"|>}<turn|>',
        '<channel|>call:bash{command:<|"|>ls<|"|>}',
        '<call>bash{command:<|"|>ls<|"|>}',
    ):
        found = read_calls(text, known)
        assert [(c.name, c.arguments) for c in found.calls] == [("bash", {"command": "ls"})]
        assert found.remaining == ""
    assert calls_of('Write <call>ghost{a:<|"|>1<|"|>} for a call.') == []


def test_words_inside_the_call_tags_stay_the_persons() -> None:
    found = read_calls('<tool_call>\nSure: {"name": "bash", "arguments": {}}\n</tool_call>', known)
    assert [(c.name, c.arguments) for c in found.calls] == [("bash", {})]
    assert found.remaining == "Sure:"


def test_json_right_after_the_models_special_tokens_is_marked_for_any_name() -> None:
    text = '<|action_start|><|plugin|>{"name": "wipe", "parameters": {"all": true}}<|action_end|>'
    found = read_calls(text, known)
    assert [(c.name, c.arguments) for c in found.calls] == [("wipe", {"all": True})]
    assert found.remaining == ""


def test_a_line_of_a_marked_block_that_is_no_call_does_not_drop_the_others() -> None:
    text = (
        '<tool_calls>\n{"name": "bash", "arguments": {"command": "ls"}}\n'
        '{"arguments": {"city": "Oslo"}}\n{"name": "get_weather", "arguments": {"city": "Oslo"}}\n'
        "</tool_calls>"
    )
    assert calls_of(text) == [("bash", {"command": "ls"}), ("get_weather", {"city": "Oslo"})]
    assert calls_of('[{"name": "bash", "arguments": {}}, {"city": "Oslo"}] is the data.') == []
