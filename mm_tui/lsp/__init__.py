"""The language-server client behind the `lsp` tool, usable on its own.

Start at `workspace.LspWorkspace` (servers by extension, the six actions, `close`). This
package's root imports nothing heavy: lsprotocol loads with `workspace`.
"""
