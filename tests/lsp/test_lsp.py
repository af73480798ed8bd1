"""Diagnostics, quick fixes, positions, hover, completion and definition through a real client."""

import ast
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import HOME

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
    # The fix travels with the diagnostic, beside what `check --explain` says.
    assert d.data["fix"]["title"] == "replace `dcoo` with `dco`"
    assert d.data["description"].startswith("PR101 unknown-setting-key")
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


def position(uri: str, line: int, character: int) -> types.TextDocumentPositionParams:
    return types.TextDocumentPositionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=types.Position(line=line, character=character),
    )


async def test_hover_shows_the_value_and_its_source(vscode: LanguageClient):
    client = vscode
    settings = client.folder / ".pi" / "pi-config-settings.json"
    settings.write_text('{"dco": true}\n')
    uri = open_rule(client, FIXED)
    await diagnostics(client, uri)
    p = position(uri, 2, 9)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=p.text_document, position=p.position)
    )
    text = hover.contents.value
    assert "**Now:** `true`" in text
    assert "pi-config-settings.json" in text
    assert "kept" in text


async def test_completion_offers_the_keys(vscode: LanguageClient):
    client = vscode
    uri = open_rule(client, "# Rule\n\n{{IF:")
    await diagnostics(client, uri)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=2, character=5),
        )
    )
    items = result if isinstance(result, list) else result.items
    labels = {item.label for item in items}
    assert {"dco", "review_loop_enforcement"} <= labels


async def test_definition_reaches_the_overridden_package_rule(vscode: LanguageClient):
    client = vscode
    path = client.folder / ".pi" / "rules" / "00-orchestrator-core.md"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text="# My core rules\n"
            )
        )
    )
    await diagnostics(client, uri)
    result = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=2),
        )
    )
    [location] = result
    # The embedded package rule, copied to the cache under the server's $HOME.
    assert location.uri.startswith(HOME.as_uri() + "/.cache/pi-rules/")
    assert location.uri.endswith("/package/00-orchestrator-core.md")
    # The editor can open it: a real file, the package's text.
    target = unquote(urlparse(location.uri).path)
    with open(target, encoding="utf-8") as f:
        assert f.read().strip()



async def test_override_a_user_rule_in_the_project_through_the_server_command(vscode: LanguageClient):
    client = vscode
    user = HOME / ".pi" / "agent" / "rules"
    user.mkdir(parents=True, exist_ok=True)
    path = user / "95-override-me.md"
    path.write_text("Mine everywhere.\n")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="markdown", version=1, text="Mine everywhere.\n"
            )
        )
    )
    await diagnostics(client, uri)
    # The server's commands are its own (`pi-rules.server.*`): the extension's `pi-rules.override`
    # would fail to register if the server advertised that id too.
    advertised = client.init.capabilities.execute_command_provider.commands
    assert list(advertised) == ["pi-rules.server.override"]
    where = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=where,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    [action] = [a for a in actions if a.title.startswith("Override in the project")]
    # lsprotocol tries `Command` before `CodeAction` for each item of the result, and a code action
    # that carries a command fits `Command` once its `command` object is turned into text: read
    # the object back from that text.
    if isinstance(action, types.CodeAction):
        name, arguments = action.command.command, action.command.arguments
    else:
        raw = ast.literal_eval(action.command)
        name, arguments = raw["command"], raw["arguments"]
    assert name == "pi-rules.server.override"
    written = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=name, arguments=arguments)
    )
    copy = client.folder / ".pi" / "rules" / "95-override-me.md"
    assert written == str(copy)
    assert copy.read_text() == "Mine everywhere.\n"


async def test_a_layer_changed_on_disk_rechecks_through_the_watchers(vscode: LanguageClient):
    client = vscode
    path = client.folder / ".pi" / "rules" / "80-watch.md"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="")
        )
    )
    assert by_code(await diagnostics(client, uri), "PR403") == []
    # VS Code offers to watch files for the server: it asked for every layer and the settings
    # files.
    [registration] = client.registrations
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    patterns = [w["globPattern"] for w in registration.register_options["watchers"]]
    user_rules = HOME / ".pi" / "agent" / "rules"
    assert str(user_rules / "*.md") in patterns
    assert str(client.folder / ".pi" / "pi-config-settings.json*") in patterns
    # Another program writes a user copy of the rule: the empty project file now masks it.
    user_rules.mkdir(parents=True, exist_ok=True)
    user_copy = user_rules / "80-watch.md"
    try:
        user_copy.write_text("User rule text.\n")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=user_copy.as_uri(), type=types.FileChangeType.Created)]
            )
        )
        [masked] = by_code(await diagnostics(client, uri), "PR403")
        assert "masks the user layer's copy" in masked.message
    finally:
        user_copy.unlink()
