"""The faces of mm-tui beside the window: each one is one more sink of the core's events.

`rows` and `seed_display` print a headless turn for people, `json_output` for programs; the ACP
agent (mm_tui/acp) and the browser view (mm_tui/serve.py) are the faces for editors and demos.
"""
