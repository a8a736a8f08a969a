"""The fault suite reuses the agent-core fixtures."""

from tests.agent.conftest import make_agent  # noqa: F401 - a fixture, re-exported
