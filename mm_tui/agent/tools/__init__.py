"""Built-in tools: one module per tool, each a `Tool` subclass (see base.py)."""
