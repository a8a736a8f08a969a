"""The bottom room: one helper per job, shared by the core, the lsp client and the window.

Nothing here imports the rest of mm_tui (an import contract checks it), so every room may
import it: the atomic writer, process groups, the terminal-text sanitizer, XDG paths, the debug
log.
"""
