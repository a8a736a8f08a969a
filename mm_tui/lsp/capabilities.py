"""What mm-tui tells a server it can do, in `initialize` (SPEC §6).

Each choice shapes the answers the actions must read: every position encoding is offered
(the server picks; see text.py), progress is asked for (to wait for indexing), links and
hierarchical symbols are welcome, and pull diagnostics may be registered by the server.
"""

from __future__ import annotations

from lsprotocol import types

CLIENT_CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(
        position_encodings=[
            types.PositionEncodingKind.Utf16,
            types.PositionEncodingKind.Utf32,
            types.PositionEncodingKind.Utf8,
        ]
    ),
    window=types.WindowClientCapabilities(work_done_progress=True),
    workspace=types.WorkspaceClientCapabilities(
        configuration=True,
        workspace_folders=True,
        # `changes` answers are as easy to apply as `documentChanges` ones (both are handled),
        # and they never carry file creations or renames the tool does not perform.
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=False),
        did_change_configuration=types.DidChangeConfigurationClientCapabilities(
            dynamic_registration=True
        ),
    ),
    text_document=types.TextDocumentClientCapabilities(
        synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
        definition=types.DefinitionClientCapabilities(link_support=True),
        references=types.ReferenceClientCapabilities(),
        hover=types.HoverClientCapabilities(
            content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
        ),
        document_symbol=types.DocumentSymbolClientCapabilities(
            hierarchical_document_symbol_support=True
        ),
        rename=types.RenameClientCapabilities(prepare_support=True),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
        diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=True),
    ),
)
