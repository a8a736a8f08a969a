"""The README's server table names every server of the zoo, each with a command to serve a
model and the base URL to give mm-tui."""

from __future__ import annotations

from pathlib import Path

from tests.servers.zoo import ZOO

README = Path(__file__).resolve().parents[2] / "README.md"
#: The zoo's name of a server, and how the README's table names it.
ROWS = {
    "llama-server": "llama.cpp `llama-server`",
    "ollama": "Ollama",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "mlx_lm.server": "`mlx_lm.server` (Apple silicon)",
    "lm-studio": "LM Studio",
    "koboldcpp": "KoboldCpp",
    "koboldcpp-1.76": "KoboldCpp",
    "localai": "LocalAI",
    "llamafile": "llamafile",
    "text-generation-webui": "text-generation-webui",
}


def test_the_readme_has_a_row_for_every_server_of_the_zoo() -> None:
    section = README.read_text(encoding="utf-8").split("## Model servers", 1)[1]
    rows = {}
    for line in section.split("\n## ", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3:
            rows[cells[0]] = cells[1:]
    assert sorted(ROWS) == sorted(emulator.name for emulator in ZOO)
    for name, label in ROWS.items():
        setup, base_url = rows[label]
        assert setup.startswith("`") and "`http://localhost:" in base_url, (name, rows[label])
        assert base_url.split("`")[1].endswith("/v1"), (name, base_url)
