"""The `diagnostics` action: pulled when offered, else pushed, and never a false silence.

Pull diagnostics are used whenever the server offers them, also when its offer arrives while
we wait (pyright registers it after the first file opens). Pushed ones are awaited up to 3 s
(SPEC §4); a server that does not re-publish an unchanged list is answered from its last
publication, said so; "call again" is advised only while the server says it is loading.
"""

from __future__ import annotations

from typing import Any

from mm_tui.lsp.actions import ActionContext
from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import ServerFailure
from mm_tui.lsp.formatting import diagnostic_lines
from mm_tui.lsp.server_state import Publication

DIAGNOSTICS_HEADER = "{count} diagnostic(s) in {path}{suffix}:"
CLEAN = "no diagnostics: {path} is clean{suffix}"
AS_LAST_PUBLISHED = " (as last published)"
NO_PUBLICATION = "no diagnostics received for {path} within {seconds:g}s ({why})"
STILL_LOADING = "{server} may still be analysing the project; call diagnostics again"
NEVER_PUBLISHED = "{server} published nothing for this file"
REPORTED_NOTHING = (
    "no diagnostics: {server} reported nothing for {path}, which does not mean clean — "
    "it reported an error instead"
)
OLDER_TEXT = (
    "{server} published nothing since the file changed; its last diagnostics were about the "
    "earlier text"
)
_PULL = ("diagnosticProvider", "textDocument/diagnostic")


def diagnostics(context: ActionContext) -> Text | Failed:
    """Pulled when the server offers it, else the pushed ones, waiting up to 3 s (SPEC §4)."""
    connection, document = context.connection, context.document
    state = connection.state
    # A fresh server may register pull diagnostics and apply its settings only once it has
    # scanned the project: asking before would wait for pushes that never come.
    state.wait_until_indexed(connection.timeouts.indexing)
    timeout = connection.timeouts.diagnostics
    suffix = ""
    publication = state.publication_for(document.key, document.version)
    if not connection.offers(*_PULL):
        if not document.changed and publication is not None:
            suffix = AS_LAST_PUBLISHED
        else:
            if document.changed and state.checks_only_on_open:
                document = context.document = connection.documents.reopen(document.key)
            publication = _wait_for_push(context, timeout)
            if publication is None and _checked_before(context):
                # It published for an earlier text and nothing for this one: a server that
                # checks a file only when opened or saved (fortls). Opened again, it checks.
                state.checks_only_on_open = True
                document = context.document = connection.documents.reopen(document.key)
                publication = _wait_for_push(context, timeout)
    if connection.offers(*_PULL):
        suffix = ""
        try:
            found = _pulled(context)
        except ServerFailure as failure:
            return context.failed("diagnostics", str(failure))
    elif publication is not None:
        found = publication.diagnostics
    elif (last := state.publications.get(document.key)) is not None and not state.loading:
        if last.after_version < connection.documents.text_since(document.key):
            # Its last word was about an earlier text: never shown as the current one.
            why = OLDER_TEXT.format(server=connection.name)
            return Text(NO_PUBLICATION.format(path=context.shown, seconds=timeout, why=why))
        # It published for this text before and is not loading: an unchanged list is not
        # published again by every server. Its last word stands, said so.
        found, suffix = last.diagnostics, AS_LAST_PUBLISHED
    else:
        loading = state.loading or connection.young
        why = (STILL_LOADING if loading else NEVER_PUBLISHED).format(server=connection.name)
        return Text(NO_PUBLICATION.format(path=context.shown, seconds=timeout, why=why))
    lines = diagnostic_lines(found, context.shown, context.lines, connection.encoding, context.root)
    if not lines:
        if state.has_errors:  # an empty list beside an error is no verdict (words below)
            return Text(REPORTED_NOTHING.format(server=connection.name, path=context.shown))
        return Text(CLEAN.format(path=context.shown, suffix=suffix))
    header = DIAGNOSTICS_HEADER.format(count=len(lines), path=context.shown, suffix=suffix)
    return Text("\n".join([header, *lines]))


def _wait_for_push(context: ActionContext, timeout: float) -> Publication | None:
    """The publication for the file's current version, waited for (bounded); None when
    none came (or the server offered pull diagnostics meanwhile)."""
    connection, document = context.connection, context.document
    state = connection.state
    state.wait_until(
        lambda: (
            connection.offers(*_PULL)
            or state.publication_for(document.key, document.version) is not None
        ),
        timeout,
    )
    return state.publication_for(document.key, document.version)


def _checked_before(context: ActionContext) -> bool:
    """Whether the server published for this file, but about an earlier text."""
    connection, key = context.connection, context.document.key
    last = connection.state.publications.get(key)
    return (
        last is not None
        and not connection.offers(*_PULL)
        and last.after_version < connection.documents.text_since(key)
    )


def _pulled(context: ActionContext) -> list[dict[str, Any]]:
    """The file's diagnostics pulled from each provider the server offers now: one pull per
    identifier it registered or announced (LSP 3.17: several providers, each under its own
    identifier and registration id), one without an identifier when it gave none."""
    connection = context.connection
    offered = connection.capabilities.get(_PULL[0])
    options = [offered] if isinstance(offered, dict) else []
    options += connection.state.options_of(_PULL[1])
    identifiers = list(dict.fromkeys(_identifier(option) for option in options)) or [None]
    found: list[dict[str, Any]] = []
    for identifier in identifiers:
        params: dict[str, Any] = {"textDocument": {"uri": context.document.uri}}
        if identifier is not None:
            params["identifier"] = identifier
        report = connection.request("textDocument/diagnostic", params)
        items = report.get("items") if isinstance(report, dict) else None
        if isinstance(items, list):
            found += [item for item in items if isinstance(item, dict)]
    return found


def _identifier(option: dict[str, Any]) -> str | None:
    identifier = option.get("identifier")
    return identifier if isinstance(identifier, str) else None
