"""mm-tui: a full-screen terminal coding agent for small local models."""

__version__ = "0.1.0"
