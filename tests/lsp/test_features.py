"""Inlay hints, the outline, references, settings files and the closer through a real client."""

import pathlib
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import HOME


def open_doc(client: LanguageClient, path: pathlib.Path, text: str, language="markdown") -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=1, text=text
            )
        )
    )
    return uri


def rule_path(client: LanguageClient, name: str) -> pathlib.Path:
    return client.folder / ".pi" / "rules" / name


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def path_of(uri: str) -> pathlib.Path:
    return pathlib.Path(unquote(urlparse(uri).path))


async def test_inlay_hints_say_kept_or_dropped_after_each_opener(vscode: LanguageClient):
    client = vscode
    (client.folder / ".pi" / "pi-config-settings.json").write_text('{"use_worktrees": true}\n')
    text = "😀 {{IF:dco}}\nx\n{{/IF}}\n{{IF:use_worktrees}}y{{/IF}}\n"
    uri = open_doc(client, rule_path(client, "70-hints.md"), text)
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(text_document=doc(uri), range=types.Range(start=at(0, 0), end=at(9, 0)))
    )
    got = [((h.position.line, h.position.character), h.label) for h in hints]
    # 😀 is two UTF-16 units: the first opener ends at 3 + 10.
    assert got == [
        ((0, 13), "dropped: dco = false, default"),
        ((3, 20), "kept: use_worktrees = true, project settings"),
    ]
    assert "is falsy" in hints[0].tooltip


async def test_the_outline_nests_the_blocks(vscode: LanguageClient):
    client = vscode
    text = "---\nrequires: coms_active\n---\n{{IF:dco}}\n{{IFNOT:use_worktrees}}x{{/IFNOT}}\n{{/IF}}\n"
    uri = open_doc(client, rule_path(client, "71-outline.md"), text)
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc(uri))
    )
    assert [s.name for s in symbols] == ["frontmatter", "IF dco"]
    block = symbols[1]
    assert (block.range.start.line, block.range.end.line) == (3, 5)
    assert [c.name for c in block.children] == ["IFNOT use_worktrees"]


async def test_references_list_every_copy_of_the_name(vscode: LanguageClient):
    client = vscode
    name = "20-code-review-loop.md"
    user = HOME / ".pi" / "agent" / "rules"
    user.mkdir(parents=True, exist_ok=True)
    (user / name).write_text("the user's copy\n")
    try:
        uri = open_doc(client, rule_path(client, name), "# Mine\n")
        found = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(uri),
                position=at(0, 3),
                context=types.ReferenceContext(include_declaration=True),
            )
        )
        paths = [path_of(location.uri) for location in found]
        assert paths[:2] == [rule_path(client, name), user / name]
        # The embedded package rule, through its copy in the cache.
        assert paths[2].parts[-2:] == ("package", name)
        assert str(paths[2]).startswith(str(HOME / ".cache" / "pi-rules"))
        assert len(paths) == 3
        # Definition: the copies below this one, the user's first.
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(uri), position=at(0, 3))
        )
        assert [path_of(location.uri) for location in found] == paths[1:]
    finally:
        (user / name).unlink()


async def test_a_key_in_a_condition_leads_to_the_settings_line(neovim: LanguageClient):
    client = neovim
    settings = client.folder / ".pi" / "pi-config-settings.json"
    settings.write_text('{\n  "é": 1, "dco": true\n}\n')
    uri = open_doc(client, rule_path(client, "72-key.md"), "{{IF:dco}}x{{/IF}}\n")
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(uri), position=at(0, 6))
    )
    [location] = found
    assert path_of(location.uri) == settings
    # Neovim offers UTF-8: `é` is two bytes, so `"dco"` starts at byte 11 of its line.
    r = location.range
    assert (r.start.line, r.start.character, r.end.character) == (1, 11, 16)


async def test_a_settings_file_hover_and_completion(vscode: LanguageClient):
    client = vscode
    path = client.folder / ".pi" / "pi-config-settings.json"
    text = '{\n  "review_loop_max_cycles": 12,\n  "log_rules": "de"\n}\n'
    uri = open_doc(client, path, text, language="json")
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(1, 5))
    )
    assert "**Rejected:** 12 is out of range" in hover.contents.value
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=at(2, 18))
    )
    items = result if isinstance(result, list) else result.items
    assert [item.label for item in items] == ['"off"', '"debug"', '"info"', '"warn"', '"error"']
    # Each replaces the whole string typed so far.
    edit = items[1].text_edit
    assert (edit.range.start.character, edit.range.end.character, edit.new_text) == (15, 19, '"debug"')


async def test_the_closer_of_the_innermost_block_completes(vscode: LanguageClient):
    client = vscode
    text = "{{IF:dco}}\n{{IFNOT:use_worktrees}}\nx\n{{/"
    uri = open_doc(client, rule_path(client, "73-closer.md"), text)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=at(3, 3))
    )
    items = result if isinstance(result, list) else result.items
    [item] = items
    assert item.label == "{{/IFNOT}}"
    edit = item.text_edit
    assert (edit.range.start.character, edit.range.end.character) == (0, 3)
    assert edit.new_text == "{{/IFNOT}}"


async def test_a_rule_scope_completes_agents_and_hovers_a_glob(vscode: LanguageClient):
    client = vscode
    for rel in ["src/api/a.ts", "src/api/b.ts", "src/web/c.ts", "node_modules/m/x.ts"]:
        (client.folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (client.folder / rel).write_text("")
    text = "---\nagents: claude, c\npaths:\n  - \"src/api/**\"\n  - \"!src\"\n---\nBody.\n"
    uri = open_doc(client, rule_path(client, "80-scope.md"), text)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=at(1, 17))
    )
    items = result if isinstance(result, list) else result.items
    labels = [item.label for item in items]
    # The known agents that start with `c`, without the one already listed.
    assert labels == ["codex", "copilot", "cursor", "cline", "crush"]
    edit = items[0].text_edit
    assert (edit.range.start.character, edit.range.end.character, edit.new_text) == (16, 17, "codex")

    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(3, 8))
    )
    r = hover.range
    assert (r.start.line, r.start.character, r.end.character) == (3, 5, 15)
    value = hover.contents.value
    assert "Matches 2 files in the project directory" in value
    assert "`src/api/a.ts`" in value and "`src/api/b.ts`" in value
    assert "web" not in value and "node_modules" not in value
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(4, 6))
    )
    assert "**Not a valid glob:**" in hover.contents.value
