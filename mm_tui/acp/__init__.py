"""mm-tui as an ACP agent (`mm-tui acp`): editors such as Zed and Toad drive the same core.

`command` is the subcommand (it imports the SDK only when run), `agent` answers the protocol's
requests, `session` bridges one core Agent (a worker thread) to the connection (asyncio), and
`tool_calls` and `file_changes` say each tool call the way ACP wants it (SPEC §9).
`client_files` and `client_terminals` lend the tools the editor's buffers and terminals when
the client offers them.
"""
