"""The agent core: turn loop, stream assembly, tools, loop detection, sessions, config.

Nothing under this package imports Textual (tests/agent/test_import_hygiene.py proves it).
"""
