"""The server zoo: one emulator per model server family people run behind mm-tui, each built
from that server's own source (cited in its module's docstring)."""

from __future__ import annotations

from tests.servers.zoo.base import Emulator
from tests.servers.zoo.koboldcpp import KoboldCpp, KoboldCpp176
from tests.servers.zoo.llama_server import LlamaServer
from tests.servers.zoo.llamafile import Llamafile
from tests.servers.zoo.lmstudio import LmStudio
from tests.servers.zoo.localai import LocalAI
from tests.servers.zoo.mlx_lm import MlxLm
from tests.servers.zoo.ollama import Ollama
from tests.servers.zoo.sglang import Sglang
from tests.servers.zoo.text_generation_webui import TextGenerationWebui
from tests.servers.zoo.vllm import Vllm

ZOO: tuple[type[Emulator], ...] = (
    LlamaServer, Ollama, Vllm, Sglang, MlxLm, LmStudio, KoboldCpp, KoboldCpp176, LocalAI,
    Llamafile, TextGenerationWebui,
)  # fmt: skip

__all__ = ["ZOO", "Emulator"]
