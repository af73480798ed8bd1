"""Diagnostics, quick fixes and positions through a real client."""

from lsprotocol import types
from pytest_lsp import LanguageClient

BROKEN = "# Rule\n\n😀 {{IF:dcoo}}\nsigned\n{{/IF}}\n"
FIXED = "# Rule\n\n😀 {{IF:dco}}\nsigned\n{{/IF}}\n"


def open_rule(client: LanguageClient, text: str, on_disk: str | None = None):
    path = client.folder / ".pi" / "rules" / "90-signing.md"
    if on_disk is not None:
        path.write_text(on_disk)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text=text
            )
        )
    )
    return uri


async def diagnostics(client: LanguageClient, uri: str):
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def by_code(found, code):
    return [d for d in found if d.code == code]


def apply(text: str, edits) -> str:
    """Applies TextEdits (UTF-16 positions, as VS Code's capabilities ask) to text."""
    lines = text.split("\n")

    def offset(pos):
        before = sum(len(line) + 1 for line in lines[: pos.line])
        line = lines[pos.line].encode("utf-16-le")[: pos.character * 2].decode("utf-16-le")
        return before + len(line)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


async def test_misspelt_key_appears_and_clears_utf16(vscode: LanguageClient):
    client = vscode
    assert client.init.capabilities.position_encoding == types.PositionEncodingKind.Utf16
    # The file on disk is right: what is checked is the editor's text.
    uri = open_rule(client, BROKEN, on_disk=FIXED)
    found = await diagnostics(client, uri)
    [d] = by_code(found, "PR101")
    assert d.severity == types.DiagnosticSeverity.Error
    assert "dcoo" in d.message
    # 😀 is two UTF-16 code units: `dcoo` starts at character 8 of line 2.
    assert (d.range.start.line, d.range.start.character) == (2, 8)
    assert (d.range.end.line, d.range.end.character) == (2, 12)

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=2, character=11),
                        end=types.Position(line=2, character=12),
                    ),
                    text="",
                )
            ],
        )
    )
    found = await diagnostics(client, uri)
    assert by_code(found, "PR101") == []

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert list(await diagnostics(client, uri)) == []


async def test_quick_fix_applies(vscode: LanguageClient):
    client = vscode
    uri = open_rule(client, BROKEN)
    [d] = by_code(await diagnostics(client, uri), "PR101")
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d]),
        )
    )
    fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert len(fixes) == 1
    [fix] = fixes
    assert fix.is_preferred
    fixed = apply(BROKEN, fix.edit.changes[uri])
    assert fixed == FIXED

    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
        )
    )
    assert by_code(await diagnostics(client, uri), "PR101") == []


async def test_utf8_positions_for_a_client_that_offers_them(neovim: LanguageClient):
    client = neovim
    assert client.init.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    uri = open_rule(client, BROKEN)
    [d] = by_code(await diagnostics(client, uri), "PR101")
    # 😀 is four bytes of UTF-8.
    assert (d.range.start.line, d.range.start.character) == (2, 10)
