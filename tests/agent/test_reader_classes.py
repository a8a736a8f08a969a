"""The classes the held-out set exposed (heldout_replies.yaml), each attacked as a hostile model
would: bracketed Python calls in prose, invoke markup with a tag prefix and typed parameters,
`<param>` children and CDATA values, Mistral's `[CALL_ID]`, a broken object around a whole
call, protocol tokens left in the answer, a call written in the reasoning beside answer text
(round 1); Gemma-style `call:name{…}` with FunctionGemma's `<escape>` strings, and Olmo 3's
calls one a line inside `<function_calls>` (round 2). Floods are sized so that a quadratic reader would run past the suite's per-test timeout
(pyproject: 120 s); no test measures wall-clock time."""

from __future__ import annotations

import pytest

from mm_tui.agent.calls import read_calls
from mm_tui.agent.calls.model import BADGE_REASONING
from mm_tui.agent.events import ToolStarted
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory, assert_valid_history

TOOLS = {"bash", "get_weather", "search", "python", "html"}
CUT = "[not run: the reply ended inside this call ({}) — call it again, whole]"


def known(name: str) -> bool:
    return name in TOOLS


def calls_of(text: str, **options: bool) -> list[tuple[str, object]]:
    return [(c.name, c.arguments) for c in read_calls(text, known, **options).calls]


# -- Python-style calls in square brackets, anywhere in prose ---------------------------------


def test_bracketed_calls_stand_anywhere_in_prose_and_leave_the_prose() -> None:
    found = read_calls("Checking: [get_weather(city='Oslo'), search(q=\"x\")] then more.", known)
    assert [(c.name, c.arguments) for c in found.calls] == [
        ("get_weather", {"city": "Oslo"}),
        ("search", {"q": "x"}),
    ]
    assert found.remaining == "Checking: then more."


@pytest.mark.parametrize(
    "text",
    [
        "Call it as `[get_weather(city='Paris')]` when needed.",
        "For example: [get_weather(city='Paris')]",
        "```bash\n[get_weather(city='Paris')]\n```",
        "[rm_everything(path='/')]",
        "[tool_name(arg='x')] and [...(a=1)] and [<name>(a=1)]",
        "See [get_weather] docs (weather) for details.",
        "[get_weather(city='Paris')) stray closer",
    ],
)
def test_bracketed_mentions_examples_and_placeholders_are_no_calls(text: str) -> None:
    assert calls_of(text) == []


def test_a_bracketed_call_the_reply_ended_inside_never_runs() -> None:
    [cut] = read_calls("Here: [get_weather(city='Tok", known).calls
    assert cut.not_run == CUT.format("it is not closed")
    [cut] = read_calls("Here: [get_weather(city='Tok", known, finished=False).calls
    assert cut.not_run == CUT.format("finish_reason length")
    assert cut.arguments == "[get_weather(city='Tok"  # never completed


def test_bracketed_floods_stay_linear() -> None:
    assert len(calls_of("[get_weather(" * 60_000)) == 1  # one cut call, never run
    assert len(calls_of("[get_weather(city='" * 60_000)) == 1
    assert len(calls_of("[get_weather(a=1)] " * 20_000)) == 20_000
    assert calls_of("[get_weather(a=" + "[" * 100_000 + "]" * 100_000 + ")]") == []


# -- invoke markup: tag prefixes, typed parameters, <param>, CDATA ---------------------------


def test_prefixed_invoke_markup_reads_typed_parameters() -> None:
    text = (
        'Sure.<｜DSML｜function_calls><｜DSML｜invoke name="search">'
        '<｜DSML｜parameter name="q" string="true">10</｜DSML｜parameter>'
        '<｜DSML｜parameter name="n" string="false">10</｜DSML｜parameter>'
        '<｜DSML｜parameter name="opts" string="false">{"deep": true}</｜DSML｜parameter>'
        '<｜DSML｜parameter name="raw" string="false">not json</｜DSML｜parameter>'
        "</｜DSML｜invoke></｜DSML｜function_calls>"
    )
    found = read_calls(text, known)
    assert [(c.name, c.arguments) for c in found.calls] == [
        ("search", {"q": "10", "n": 10, "opts": {"deep": True}, "raw": "not json"})
    ]
    assert found.remaining == "Sure."


@pytest.mark.parametrize(
    "text",
    [
        '<｜DSML｜invoke name="<name>"><｜DSML｜parameter name="a">1</｜DSML｜parameter></｜DSML｜invoke>',
        '<x:invoke name="..."><x:parameter name="a">1</x:parameter></x:invoke>',
        'Use `<｜DSML｜invoke name="bash">` to call.',
        '```bash\n<｜DSML｜invoke name="bash"><｜DSML｜parameter name="c">ls</｜DSML｜parameter>'
        "</｜DSML｜invoke>\n```",
        'The reply may end with <｜DSML｜invoke name="bash">',
    ],
)
def test_prefixed_markup_mentions_and_placeholders_are_no_calls(text: str) -> None:
    assert calls_of(text) == []


def test_a_cdata_value_is_verbatim_and_its_tags_are_not_markup() -> None:
    text = (
        '<function name="html"><param name="markup"><![CDATA[<b>x</b> </param>'
        ' <function name="bash">]]></param></function>'
    )
    assert calls_of(text) == [("html", {"markup": '<b>x</b> </param> <function name="bash">'})]


def test_markup_floods_stay_linear() -> None:
    one = '<function name="html"><param name="markup"><![CDATA[x]]></param></function>'
    assert len(calls_of(one * 20_000)) == 20_000
    assert calls_of('<function name="html"><param name="m">' + "<![CDATA[" * 100_000) == [
        ("html", {"m": "<![CDATA[" * 100_000})
    ]
    assert calls_of('<｜DSML｜invoke name="bash"> ' * 100_000 + "end") == []
    assert calls_of('<invoke name="bash">' + '<parameter name="a">' * 100_000 + "</invoke>") == [
        ("bash", {"a": ""})
    ]


# -- Mistral's [CALL_ID], a broken object around a whole call --------------------------------


def test_mistral_call_ids_are_skipped_and_a_cut_one_never_runs() -> None:
    text = '[TOOL_CALLS]bash[CALL_ID]a1[ARGS]{"command": "ls"}[TOOL_CALLS]search[CALL_ID]b2[ARGS]{}'
    assert calls_of(text) == [("bash", {"command": "ls"}), ("search", {})]
    [cut] = read_calls(
        '[TOOL_CALLS]bash[CALL_ID]1[ARGS]{"command": "l', known, finished=False
    ).calls
    assert cut.not_run == CUT.format("finish_reason length")
    assert calls_of("[TOOL_CALLS]bash[CALL_ID]" * 100_000) == []


def test_a_whole_call_inside_a_broken_object_is_the_call() -> None:
    assert calls_of('{"name": "bash", "arguments": {{"name": "bash", "arguments": {}}') == [
        ("bash", {})
    ]
    # no whole call inside: the broken one is kept so the model hears its JSON was broken
    [(name, arguments)] = calls_of('{"name": "bash", "arguments": {{"x": 1}}')
    assert name == "bash" and isinstance(arguments, str)


# -- protocol tokens and empty wrappers left in the answer -----------------------------------


@pytest.mark.parametrize(
    ("text", "remaining"),
    [
        (
            'Noted.<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "bash", "arguments": {}}</s>',
            "Noted.",
        ),
        ('<TOOLCALL>[{"name": "bash", "arguments": {}}]</TOOLCALL>Done.', "Done."),
        ('</think><tool_call>{"name": "bash", "arguments": {}}</tool_call>', ""),
        ('Hi<|function_call|>{"name": "bash", "arguments": {}}', "Hi"),
    ],
)
def test_a_calls_own_tokens_and_wrappers_leave_the_answer(text: str, remaining: str) -> None:
    found = read_calls(text, known)
    assert [c.name for c in found.calls] == ["bash"]
    assert found.remaining == remaining


def test_tokens_stay_in_an_answer_without_calls_and_floods_stay_linear() -> None:
    assert read_calls("Use <|role_sep|> as the separator.", known).remaining == (
        "Use <|role_sep|> as the separator."
    )
    call = '<tool_call>{"name": "bash", "arguments": {}}</tool_call>'
    assert read_calls("<|a|> word " * 50_000 + call, known).remaining == "word"
    assert len(read_calls("<x>" * 50_000 + "</x>" * 50_000 + call, known).calls) == 1


# -- Gemma-style calls with another string delimiter; Olmo 3's calls one a line ---------------


def test_function_gemma_calls_read_with_or_without_their_tokens() -> None:
    text = (
        "On it. <start_function_call>call:get_weather{city:<escape>Oslo, NO<escape>"
        "days:<escape>3<escape>}<end_function_call>"
    )
    found = read_calls(text, known)
    assert [(c.name, c.arguments) for c in found.calls] == [
        ("get_weather", {"city": "Oslo, NO", "days": "3"})
    ]
    assert found.remaining == "On it."
    bare = "call:search{q:<escape>a: b<escape>}"
    assert calls_of(bare) == [("search", {"q": "a: b"})]


@pytest.mark.parametrize(
    "text",
    [
        "call:rm_everything{path:<escape>/<escape>}",
        "call:tool_name{x:<escape>1<escape>}",
        "Use `call:get_weather{city:<escape>Oslo<escape>}` to ask.",
        "For example: call:get_weather{city:<escape>Oslo<escape>}",
        "recall:get_weather{city:<escape>Oslo<escape>}",
    ],
)
def test_bare_gemma_mentions_examples_and_undeclared_names_are_no_calls(text: str) -> None:
    assert calls_of(text) == []


def test_a_gemma_call_cut_inside_a_string_never_runs_and_floods_stay_linear() -> None:
    [cut] = read_calls("<start_function_call>call:search{q:<escape>abc", known).calls
    assert cut.not_run == CUT.format("it is not closed")
    assert cut.arguments == "{q:<escape>abc"  # never completed
    assert len(calls_of("call:search{q:<escape>" * 50_000)) == 1
    assert calls_of("<start_function_call>" * 100_000) == []


def test_olmo_calls_one_a_line_inside_function_calls() -> None:
    text = "<function_calls>get_weather(city='Oslo')\nsearch()\nsearch(q=[])</function_calls>"
    assert calls_of(text) == [
        ("get_weather", {"city": "Oslo"}),
        ("search", {}),
        ("search", {"q": []}),
    ]
    assert calls_of("<function_calls>I would call get_weather here.</function_calls>") == []
    flood = "<function_calls>" + "search()\n" * 20_000 + "</function_calls>"
    assert len(calls_of(flood)) == 20_000


def test_answer_tags_leave_the_answer_only_beside_a_call() -> None:
    call = '<tool_calls>[{"name": "search", "arguments": {}}]</tool_calls>'
    assert read_calls(call + "\n</answer>", known).remaining == ""
    assert read_calls("<answer>Paris.</answer>", known).remaining == "<answer>Paris.</answer>"


# -- a call written in the reasoning, the answer holding text --------------------------------


def test_a_marked_call_in_the_reasoning_runs_beside_answer_text(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    reasoning = 'I will echo. <tool_call>{"name": "echo", "arguments": {"text": "hi"}}</tool_call>'
    model_server.enqueue(Reply(reasoning=reasoning, text="Let me look."), Reply(text="Done."))
    agent, events = make_agent()
    agent.run_turn("say hi")
    started = events.of(ToolStarted)
    assert [(e.name, e.arguments, e.badge) for e in started] == [
        ("echo", {"text": "hi"}, f"{BADGE_REASONING}: <tool_call>")
    ]
    first = next(m for m in agent.messages if m["role"] == "assistant")
    assert first["content"] == "Let me look."
    assert_valid_history(agent.messages)


@pytest.mark.parametrize(
    "reasoning",
    [
        '{"name": "echo", "arguments": {"text": "hi"}}',
        "```json\n" + '{"name": "echo", "arguments": {"text": "hi"}}' + "\n```",
        "[echo(text='hi')]",
        'For example: <tool_call>{"name": "echo", "arguments": {"text": "hi"}}</tool_call>',
        '<tool_call>{"name": "echo", "arguments": {"text": "h',
    ],
)
def test_drafts_examples_and_cut_calls_in_the_reasoning_never_run(
    reasoning: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(reasoning=reasoning, text="Here is my answer."))
    agent, events = make_agent()
    agent.run_turn("say hi")
    assert events.of(ToolStarted) == []
    assert agent.messages[-1]["content"] == "Here is my answer."
