"""Nested rule directories (`D/.pi/rules`) through a real client: served like the project's rules."""

from lsprotocol import types
from pytest_lsp import LanguageClient

from test_features import at, doc, open_doc


async def published(client: LanguageClient, uri: str):
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


def codes(found):
    return sorted(str(d.code) for d in found)


async def test_a_nested_rule_file_is_checked_and_served(vscode: LanguageClient):
    client = vscode
    api = client.folder / "packages" / "api"
    (api / "src").mkdir(parents=True)
    (api / "src" / "handler.ts").write_text("")
    (api / ".pi" / "rules").mkdir(parents=True)
    (client.folder / ".pi" / "rules" / "10-api.md").write_text("The root's rule.\n")
    text = "---\npaths: src/**, src/[x\n---\n# API\n\n{{IF:dco}}\nsigned\n{{/IF}}\n"
    uri = open_doc(client, api / ".pi" / "rules" / "10-api.md", text)
    found = await published(client, uri)
    # The watchers cover the nested directories' rule files.
    [registration] = client.registrations
    patterns = [w["globPattern"] for w in registration.register_options["watchers"]]
    assert str(client.folder / "**" / ".pi" / "rules" / "*.md") in patterns
    [invalid] = [d for d in found if d.code == "PR1001"]
    assert invalid.severity == types.DiagnosticSeverity.Error
    assert "src/[x" in invalid.message
    # `src/[x` is on line 1, after `paths: src/**, `.
    r = invalid.range
    assert (r.start.line, r.start.character, r.end.line, r.end.character) == (1, 15, 1, 21)
    # It replaces the root's rule of the same name, which needs no walk of the repository.
    [replaces] = [d for d in found if d.code == "PR1006"]
    assert "10-api.md" in replaces.message and "packages/api" in replaces.message
    # A glob that matches nothing needs the walk: `check` alone says so.
    assert "PR1004" not in codes(found)

    # A keystroke that mends the glob: the finding goes.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=at(1, 19), end=at(1, 20)), text="]"
                )
            ],
        )
    )
    found = await published(client, uri)
    assert "PR1001" not in codes(found), found
    assert "PR1006" in codes(found)

    # Hover on a glob counts the files below the nested directory, not the project's.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(1, 9))
    )
    assert "Matches 1 file" in hover.contents.value, hover.contents.value
    assert "`src/handler.ts`" in hover.contents.value
    # Hover on a condition's key, as in a project rule.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(5, 7))
    )
    assert hover is not None and "dco" in hover.contents.value
    # The outline.
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc(uri))
    )
    assert any("dco" in s.name for s in symbols), symbols
