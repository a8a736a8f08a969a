"""The window's non-visual parts: turn state and intents, slash commands, the event bridge,
and the replay source. Nothing here draws; the app (`mm_tui.app`) and its widgets do.
"""
