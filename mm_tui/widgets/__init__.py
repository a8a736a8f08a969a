"""The window's widgets: each renders events of `mm_tui.agent.events`, none holds agent logic."""
