"""A command killed by a signal is said in the same words whether bash ran it or an editor's
terminal did (ACP reports the signal by name, `SIGKILL`, or number)."""

from __future__ import annotations

import signal

import pytest

from mm_tui.acp.client_terminals import signal_name_words
from mm_tui.agent.tools.bash import signal_words


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV, signal.SIGINT])
def test_an_editor_terminals_signal_reads_as_bashs_own(sig: signal.Signals) -> None:
    assert signal_name_words(sig.name) == signal_words(sig.value)
    assert signal_name_words(str(sig.value)) == signal_words(sig.value)
    assert signal_name_words(sig.name.lower()) == signal_words(sig.value)


def test_the_words_are_gos_and_an_unknown_name_is_kept() -> None:
    assert signal_name_words("SIGKILL") == "killed"
    assert signal_name_words("SIGSEGV") == "segmentation fault"
    assert signal_name_words("SIGNOTHING") == "signothing"
