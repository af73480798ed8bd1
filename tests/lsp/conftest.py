"""End-to-end tests of `pi-rules lsp` with a real client (pytest-lsp, on pygls).

The server is the binary named by PI_RULES_BIN (./run-tests passes the debug build). Each test
gets a project folder (a repository with .pi/rules) and an empty $HOME of its own.
"""

import os
import pathlib
import sys
import tempfile

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

BIN = os.environ.get("PI_RULES_BIN", "pi-rules")

# One temporary tree for the session: the server's $HOME and the projects.
ROOT = pathlib.Path(tempfile.mkdtemp(prefix="pi-rules-lsp-")).resolve()
HOME = ROOT / "home"
HOME.mkdir()
ENV = {"HOME": str(HOME), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def new_project(name: str) -> pathlib.Path:
    folder = ROOT / name
    (folder / ".git").mkdir(parents=True)
    (folder / ".pi" / "rules").mkdir(parents=True)
    return folder


async def start(client: LanguageClient, folder: pathlib.Path, spec: str, options=None):
    # The server registers file watchers, as editors that offer dynamic registration (VS Code
    # among them) accept; this client accepts and keeps them.
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):
        client.registrations.extend(params.registrations)

    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(spec),
            workspace_folders=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
            initialization_options=options,
        )
    )
    return result


def config(*args: str):
    return ClientServerConfig(server_command=[BIN, "lsp", *args], server_env=ENV)


# Started as the VS Code extension's client (vscode-languageclient) starts it: `--stdio` appended.
@pytest_lsp.fixture(config=config("--stdio"))
async def vscode(lsp_client: LanguageClient, request):
    """A client with VS Code's capabilities (UTF-16 positions), on a fresh project."""
    folder = new_project(f"vscode-{request.node.name}")
    lsp_client.folder = folder
    lsp_client.init = await start(lsp_client, folder, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=config())
async def neovim(lsp_client: LanguageClient, request):
    """A client with Neovim 0.11's capabilities (it offers UTF-8 positions)."""
    folder = new_project(f"neovim-{request.node.name}")
    lsp_client.folder = folder
    lsp_client.init = await start(lsp_client, folder, "neovim@v0.11.0")
    yield
    await lsp_client.shutdown_session()
