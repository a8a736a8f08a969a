"""The call reader attacked as a hostile model would: inline-code mentions,
placeholder names, examples in code blocks, huge or deeply nested JSON, nested tags, unicode;
and the policy for reasoning, cut replies and native names."""

from __future__ import annotations

import pytest

from mm_tui.agent.calls import read_calls
from mm_tui.agent.calls.native_repair import mend_native_call
from mm_tui.agent.repair import parse_arguments
from mm_tui.agent.text_calls import BADGE_TEXT_TAG, BADGE_TEXT_TOKENS, extract_text_calls

TOOLS = {"bash", "echo", "read_file", "get_weather"}


def known(name: str) -> bool:
    return name in TOOLS


def calls_of(text: str, **options: bool) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in read_calls(text, known, **options).calls]


@pytest.mark.parametrize(
    "text",
    [
        'Call it like `{"name": "bash", "arguments": {"command": "ls"}}` when needed.',
        'Run `<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>`.',
        'For example:\n```json\n{"name": "bash", "arguments": {"command": "rm -rf /"}}\n```',
        'The format is <tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>',
        '```bash\n{"name": "bash", "arguments": {"command": "ls"}}\n```',
        "I could run the bash tool with ls if you want.",
        '{"name": "rm_everything", "arguments": {}}',
        'Here is a user: {"name": "Alice"}',
        '<tool_call>{"name": "...", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "<tool name>", "arguments": {"x": 1}}</tool_call>',
        "<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n"
        "</parameter>\n</function>",
        "<tool_call>\n<function=tool_name>\n</function>\n</tool_call>",
        "[special delivery]",
        'for { fmt.Println("hello") }',
    ],
)
def test_mentions_examples_prose_and_placeholders_are_never_calls(text: str) -> None:
    assert calls_of(text) == []


@pytest.mark.parametrize("depth", [5000, 100_000])
def test_deep_nesting_is_a_plain_error_never_a_recursion_error(depth: int) -> None:
    # Quadratic work on these sizes takes hours: the suite's per-test timeout catches it,
    # with no timed assertion that a loaded machine could fail (bench/ measures speed).
    nested = "[" * depth + "]" * depth
    [call] = read_calls(
        '<tool_call>{"name": "echo", "arguments": {"text": ' + nested + "}}</tool_call>", known
    ).calls
    assert call.name == "echo" and isinstance(call.arguments, str)  # the model hears why
    parsed = parse_arguments('{"text": ' + nested + "}")
    assert parsed.arguments is None and parsed.error
    assert calls_of("[" * depth) == [] and calls_of("{ " * depth) == []


def test_huge_arguments_are_read_whole() -> None:
    text = "x" * 1_000_000
    found = read_calls('{"name": "echo", "arguments": {"text": "' + text + '"}}', known)
    assert [(c.name, c.arguments) for c in found.calls] == [("echo", {"text": text})]


def test_unicode_and_nested_wrappers() -> None:
    text = '<tool_call><tool_call>{"name": "echo", "arguments": {"text": "héllo 🌍 \u202e"}}</tool_call></tool_call>'
    found = read_calls(text, known)
    assert [(c.name, c.arguments) for c in found.calls] == [("echo", {"text": "héllo 🌍 \u202e"})]
    assert found.remaining == ""


def test_every_call_keeps_its_badge_and_raw_text() -> None:
    text = 'Sure.<|tool_call>call:bash{command:<|"|>ls<|"|>}<tool_call|> then more'
    [call] = read_calls(text, known).calls
    assert call.badge == BADGE_TEXT_TAG and call.raw == text[5:-10]
    harmony = '<|start|>assistant<|channel|>commentary to=functions.bash<|message|>{"command": "ls"}<|call|>'
    [call] = read_calls(harmony, known).calls
    assert call.badge == BADGE_TEXT_TOKENS and call.raw == harmony


def test_a_call_in_reasoning_counts_only_in_the_models_own_markers() -> None:
    marked = '<invoke name="bash"><parameter name="command">ls</parameter></invoke>'
    assert calls_of(marked, reasoning=True) == [("bash", {"command": "ls"})]
    assert read_calls(marked, known, reasoning=True).calls[0].badge.startswith("from reasoning")
    assert calls_of('{"name": "bash", "arguments": {"command": "ls"}}', reasoning=True) == []


def test_a_reply_cut_by_the_token_limit_never_runs_its_last_call() -> None:
    text = '<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call><tool_call>{"name": "bash", "arguments": {'
    found = extract_text_calls(text, known, finished=False)
    assert [c.not_run for c in found.calls][0] == ""
    assert "finish_reason length" in found.calls[-1].not_run
    cut_in_string = '<tool_call>{"name": "bash", "arguments": {"command": "rm -rf /tmp/bu'
    [call] = extract_text_calls(cut_in_string, known).calls
    assert call.arguments == cut_in_string.removeprefix("<tool_call>")  # never completed


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("bash<|channel|>commentary", '{"command": "ls"}', ("bash", {"command": "ls"})),
        ("functions.bash", '{"command": "ls"}', ("bash", {"command": "ls"})),
        ("read_file</arg_value>", "{}", ("read_file", {})),
        (
            "read_file<arg_key>path</arg_key><arg_value>a.py</arg_value>",
            "",
            ("read_file", {"path": "a.py"}),
        ),
    ],
)
def test_native_names_with_leaked_markup_are_mended(
    name: str, arguments: str, expected: tuple[str, dict[str, str]]
) -> None:
    import json

    mended = mend_native_call(name, arguments, known)
    assert mended is not None and (mended.name, json.loads(mended.arguments)) == expected
    assert mended.raw.startswith(name)


def test_a_native_name_that_cannot_be_mended_is_left_for_the_unknown_tool_answer() -> None:
    assert mend_native_call("bash", "{}", known) is None
    assert mend_native_call("<|channel|>", "{}", known) is None
    assert mend_native_call("delete_all<|x|>", "{}", known) is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"q": \\"foo\\"}', {"q": "foo"}),
        ('{"a": 1, "b": \\n[1, 2]\\n}', {"a": 1, "b": [1, 2]}),
        ('{"path": "C:\\Users\\x"}', {"path": "C:\\Users\\x"}),
        ('{"c": "f("K", "d")"}', {"c": 'f("K", "d")'}),
        ('{"path</arg_key>": "/x"}', {"path": "/x"}),
    ],
)
def test_native_arguments_are_repaired(raw: str, expected: dict[str, object]) -> None:
    assert parse_arguments(raw).arguments == expected


def test_a_long_answer_full_of_json_is_read_in_linear_time() -> None:
    # Quadratic work on these sizes takes hours: the suite's per-test timeout catches it,
    # with no timed assertion that a loaded machine could fail (bench/ measures speed).
    text = 'The JSON {"x": 1} shows ' * 3000 + '{"name": "bash", "arguments": {"command": "ls"}}'
    lines = "line\n" * 3000 + 'get_weather\n{"location": "Paris"}'
    assert calls_of(text) == [("bash", {"command": "ls"})]
    assert calls_of(lines) == [("get_weather", {"location": "Paris"})]
    assert calls_of("[a] (b) {c: d} <x>y</x> `z` " * 3000) == []


def test_a_json_string_where_the_schema_wants_an_array_is_decoded() -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "edits": {"type": "array"}},
    }
    raw = '{"path": "a.py", "edits": "[{\\"old\\": \\"x\\", \\"new\\": \\"y\\"}]"}'
    parsed = parse_arguments(raw, schema)
    assert parsed.arguments == {"path": "a.py", "edits": [{"old": "x", "new": "y"}]}
    assert parsed.badge == "arguments fitted to the schema"
    content = '{"path": "[1, 2]", "edits": []}'  # a string the schema wants stays a string
    assert parse_arguments(content, schema).arguments == {"path": "[1, 2]", "edits": []}


@pytest.mark.parametrize(
    "text",
    [
        "Use <function=bash> to run commands.",
        'Call <invoke name="bash"> when you need a shell.',
        "I will now call <tool_call>bash",
    ],
)
def test_markup_mentioned_in_prose_or_cut_before_its_body_is_no_call(text: str) -> None:
    assert calls_of(text) == []


def test_markup_calls_without_arguments_need_their_closer() -> None:
    assert calls_of("<tool_call>\n<function=bash>\n</function>\n</tool_call>") == [("bash", {})]
    assert calls_of('<invoke name="bash"></invoke>') == [("bash", {})]
    assert calls_of("<tool_call>bash</tool_call>") == [("bash", {})]


def test_hostile_markup_floods_are_read_in_linear_time() -> None:
    # Quadratic work on these sizes takes hours: the suite's per-test timeout catches it,
    # with no timed assertion that a loaded machine could fail (bench/ measures speed).
    assert calls_of("<a>" * 100_000) == []
    assert calls_of("<bash>" * 100_000) == []
    assert calls_of("x" * 1_000_000) == []
    assert calls_of("word:" * 200_000) == []
    assert len(calls_of("<bash><command>ls</command></bash> " * 2000)) == 2000
