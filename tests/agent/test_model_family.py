"""Per-family defaults: the model id names the family, the family gives the call format to
expect, whether the text protocol serves it better, and its makers' sampling; the config wins;
an id of no known family keeps today's defaults."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mm_tui.agent.config import Config, ConfigError
from mm_tui.agent.config.loading import parse_config_text
from mm_tui.agent.events import Notice
from mm_tui.agent.model_family import defaults_for, describe, family_of
from mm_tui.doctor import run_checks
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("qwen3:8b", "qwen"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen"),
        ("hf.co/unsloth/gemma-3-12b-it-GGUF:Q4_K_M", "gemma"),
        ("gemma3:12b", "gemma"),
        ("mistralai/Devstral-Small-2505", "mistral"),
        ("mistral-small3.2:24b", "mistral"),
        ("gpt-oss:20b", "gpt-oss"),
        ("openai/gpt-oss-20b", "gpt-oss"),
        ("glm4:9b", "glm"),
        ("THUDM/GLM-4-9B-0414", "glm"),
        ("granite3.3:8b", "granite"),
        ("ibm-granite/granite-4.0-h-tiny", "granite"),
        ("phi4-mini", "phi"),
        ("microsoft/Phi-4", "phi"),
        ("llama3.1:8b", None),
        ("scripted-model", None),
        ("dolphin-mixtral", None),
    ],
)
def test_the_model_id_names_the_family(model: str, family: str | None) -> None:
    found = family_of(model)
    assert (found.name if found is not None else None) == family


def test_each_family_brings_its_makers_sampling_and_mode() -> None:
    config = Config()
    qwen = defaults_for("qwen3:8b", config)
    assert qwen.sampling == {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0}
    assert not qwen.text_mode
    assert defaults_for("gemma3:12b", config).text_mode  # its template has no tools
    assert not defaults_for("gemma4:12b", config).text_mode
    assert defaults_for("phi4:14b", config).text_mode
    assert not defaults_for("phi4-mini", config).text_mode
    assert defaults_for("devstral:24b", config).sampling == {"temperature": 0.15}
    assert defaults_for("granite3.3:8b", config).sampling == {}


def test_the_config_wins_over_the_family() -> None:
    config = Config(temperature=0.2, top_k=5)
    chosen = defaults_for("qwen3:8b", config)
    assert chosen.sampling == {"temperature": 0.2, "top_p": 0.8, "top_k": 5, "min_p": 0.0}
    assert chosen.overridden == ("temperature", "top_k")
    assert defaults_for("llama3", Config(family="qwen")).family is not None
    assert defaults_for("qwen3:8b", Config(family="none")).sampling == {}
    assert defaults_for("qwen3:8b", Config(family="none", temperature=0.3)).sampling == {
        "temperature": 0.3
    }
    written = replace(Config(), file_keys=frozenset({"toolCalls"}))
    assert not defaults_for("gemma3:12b", written).text_mode  # toolCalls set in the file


def test_an_unknown_family_keeps_todays_defaults() -> None:
    chosen = defaults_for("llama3.1:8b", Config())
    assert chosen.family is None and chosen.sampling == {} and not chosen.text_mode


def test_the_config_file_reads_the_sampling_keys_and_the_family(tmp_path: Path) -> None:
    config = parse_config_text("topP: 0.9\ntopK: 40\nminP: 0.05\nfamily: none\n", tmp_path / "c")
    assert (config.top_p, config.top_k, config.min_p, config.family) == (0.9, 40, 0.05, "none")
    with pytest.raises(ConfigError, match="family"):
        parse_config_text("family: llama\n", tmp_path / "c")


def sampling_sent(request: dict) -> dict:
    return {k: request[k] for k in ("temperature", "top_p", "top_k", "min_p") if k in request}


def test_requests_carry_the_familys_sampling(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, _ = make_agent(model="qwen3:8b")
    model_server.enqueue(Reply(text="Hi."))
    agent.run_turn("hi")
    sent = model_server.wait_for_requests(1)[0]
    assert sampling_sent(sent) == {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "min_p": 0.0}


def test_an_unknown_model_is_sent_no_sampling_as_today(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, _ = make_agent()
    model_server.enqueue(Reply(text="Hi."))
    agent.run_turn("hi")
    assert sampling_sent(model_server.wait_for_requests(1)[0]) == {}


def test_a_family_better_in_text_mode_gets_the_tools_in_the_prompt(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, recorder = make_agent(model="gemma3:12b")
    model_server.enqueue(Reply(text="Hi."))
    agent.run_turn("hi")
    sent = model_server.wait_for_requests(1)[0]
    assert "tools" not in sent
    assert "# Tools" in sent["messages"][0]["content"]
    assert any("Gemma model" in n.text for n in recorder.of(Notice))


def test_doctor_shows_the_family_and_the_defaults_chosen(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.models = ["qwen3:8b"]
    config = Config(base_url=model_server.base_url, top_k=30)
    lines = [f.text for f in run_checks(config, tmp_path, env={}, probe=False)]
    family = [line for line in lines if line.startswith("model family:")]
    assert family == [describe("qwen3:8b", config)]
    assert (
        "Qwen" in family[0] and "top_k 30" in family[0] and "set in the config: top_k" in family[0]
    )
