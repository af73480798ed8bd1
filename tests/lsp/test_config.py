"""pi-rules' configuration file (.pi/pi-rules.toml) through a real client."""

from lsprotocol import types
from pytest_lsp import LanguageClient

from test_features import at, doc, open_doc


async def published(client: LanguageClient, uri: str):
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


async def test_the_configuration_file_is_checked_completed_and_hovered(vscode: LanguageClient):
    client = vscode
    path = client.folder / ".pi" / "pi-rules.toml"
    text = "[rules]\nscoped = true\n\n[check]\nignre = [\"PR512\"]\n"
    uri = open_doc(client, path, text, language="toml")
    found = await published(client, uri)
    [unknown] = [d for d in found if d.code == "PR752"]
    assert unknown.severity == types.DiagnosticSeverity.Error
    assert "ignre" in unknown.message
    assert unknown.range.start.line == 4
    assert unknown.range.start.character == 0

    # The fix typed: the finding goes.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=at(4, 3), end=at(4, 3)), text="o"
                )
            ],
        )
    )
    found = await published(client, uri)
    assert [d for d in found if d.code == "PR752"] == []

    # Completion of a value, and of a key in its table.
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=at(1, 9))
    )
    items = result if isinstance(result, list) else result.items
    assert [i.label for i in items] == ["true", "false"]
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=at(2, 0))
    )
    items = result if isinstance(result, list) else result.items
    assert [i.label for i in items] == ["scoped"]

    # Hover on a key: what it means, its value now and the file it comes from (the editor's).
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(1, 2))
    )
    value = hover.contents.value
    assert "`rules.scoped`" in value, value
    assert "**Now:** `true`, from the project file" in value, value
