"""The window's plain parts, held by `mm_tui.app.MMApp` (composition, not base classes):
`WindowScreen` (the conversation's widgets and the messages they send up), `CoreStart` (how the
core is built), `Clock` (the ticks while a turn runs) and `Preferences` (keymap, theme,
notifications). None imports the app module."""
