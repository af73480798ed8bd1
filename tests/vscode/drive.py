"""The VS Code extension in a real VS Code: code-server (VS Code 1.139.1 served to a browser) with
the extension's .vsix installed, driven through Debian's Chromium by Playwright, as a user works.

Called by run.sh (which installs code-server and finds the Python with Playwright):

    python drive.py --vsix FILE --code-server BIN --node-bin DIR --chromium FILE

Everything code-server keeps (user data, extensions, its configuration, HOME and the XDG
directories) is in one temporary folder, with the workspace it opens. The cases run in order on
one page, each bounded in time; a failed case keeps a screenshot, and the run keeps the folder
with code-server's and the extension's logs, and says where. It ends with the line
`N passed, N failed` and exits 0 when every case passed, 1 otherwise.

Loopback only: code-server is started with its update check and extension gallery off, and told
to send every other request through a recording proxy on loopback that answers none (the user
settings' `http.proxy`, the proxy variables); the last case fails if anything came to it (without
`--disable-update-check` and `EXTENSIONS_GALLERY`, GitHub's API and Open VSX do). The browser has
a recorder of its own (`--proxy-server`): Chromium's own background requests are listed, not
failed on. run.sh also starts all this in a network namespace with only loopback up where it can,
so nothing reaches further even so.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

# The longest any one wait may take: the first ones include VS Code's start in the browser and
# the extension's activation.
START_MS = 90_000
STEP_MS = 20_000

SETTINGS = '{\n  "dco": true,\n  "use_worktree": true\n}\n'
RULE_NAME = "90-signing.md"
BROKEN = "# Signing\n\n{{IF:dcoo}}Sign every commit.\n\n{{/IF}}Keep commits small.\n"
FIXED = BROKEN.replace("dcoo", "dco")
# The rule "pi-rules: New rule" creates, named with its prefix (so no free one is picked).
NEW_RULE = "95-reviews"

# VS Code's user settings: nothing that reaches for the network, no tours in the way.
USER_SETTINGS = {
    "update.mode": "none",
    "update.showReleaseNotes": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "telemetry.telemetryLevel": "off",
    "workbench.enableExperiments": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "chat.disableAIFeatures": True,
    "json.schemaDownload.enable": False,
    "npm.fetchOnlinePackageInfo": False,
    "typescript.disableAutomaticTypeAcquisition": True,
    "git.enabled": False,
    "git.autofetch": False,
    "security.workspace.trust.enabled": False,
    "editor.hover.delay": 100,
    "files.autoSave": "off",
}


class Recorder:
    """A proxy on loopback that records whoever connects and closes at once: the test fails
    when anything tried to leave the machine through it."""

    def __init__(self, who: str):
        self.who = who
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.seen: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.settimeout(2)
            try:
                first = conn.recv(4096).split(b"\r\n", 1)[0].decode("latin-1")
            except OSError:
                first = "(nothing read)"
            self.seen.append(first)
            conn.close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"


def write(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


class Run:
    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="pi-rules-vscode-"))
        self.keep = False
        # One for code-server (the test fails when it saw anything), one for the browser, whose
        # own background requests (a component update check, the account list) are reported.
        self.recorder = Recorder("code-server")
        self.browser_recorder = Recorder("chromium")
        t = self.tmp
        self.home = t / "home"
        self.user_data = t / "user-data"
        self.extensions = t / "extensions"
        self.ws = t / "workspace"
        self.shots = t / "screenshots"
        for d in (self.home, self.user_data, self.extensions, self.ws, self.shots):
            d.mkdir(parents=True)
        write(self.ws / ".pi" / "pi-config-settings.json", SETTINGS)
        write(self.ws / ".pi" / "rules" / RULE_NAME, BROKEN)
        settings = dict(USER_SETTINGS, **{"http.proxy": self.recorder.url, "http.proxySupport": "override"})
        write(self.user_data / "User" / "settings.json", json.dumps(settings, indent=2))
        write(t / "config.yaml", "auth: none\ncert: false\n")
        self.env = {
            "PATH": f"{args.node_bin}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(t / "xdg-config"),
            "XDG_DATA_HOME": str(t / "xdg-data"),
            "XDG_CACHE_HOME": str(t / "xdg-cache"),
            "XDG_STATE_HOME": str(t / "xdg-state"),
            "XDG_RUNTIME_DIR": str(t / "xdg-runtime"),
            "TMPDIR": str(t / "tmp"),
            "LANG": "C.UTF-8",
            # No gallery: code-server's default (Open VSX) is replaced by none.
            "EXTENSIONS_GALLERY": "{}",
            "HTTP_PROXY": self.recorder.url,
            "HTTPS_PROXY": self.recorder.url,
            "http_proxy": self.recorder.url,
            "https_proxy": self.recorder.url,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        Path(self.env["XDG_RUNTIME_DIR"]).mkdir(mode=0o700)
        Path(self.env["TMPDIR"]).mkdir()
        self.server = None

    def code_server(self, *more):
        return [
            self.args.code_server,
            "--config", str(self.tmp / "config.yaml"),
            "--user-data-dir", str(self.user_data),
            "--extensions-dir", str(self.extensions),
            *more,
        ]

    def install(self):
        started = time.monotonic()
        done = subprocess.run(
            self.code_server("--install-extension", self.args.vsix),
            env=self.env, capture_output=True, text=True, timeout=120,
        )
        if done.returncode != 0:
            raise SystemExit(f"code-server --install-extension failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        listed = subprocess.run(
            self.code_server("--list-extensions", "--show-versions"),
            env=self.env, capture_output=True, text=True, timeout=120,
        ).stdout
        print(f"installed {os.path.basename(self.args.vsix)} in {time.monotonic() - started:.1f} s: {listed.split()}")

    def start(self) -> str:
        log = open(self.tmp / "code-server.log", "w")
        self.server = subprocess.Popen(
            self.code_server(
                "--bind-addr", "127.0.0.1:0",
                "--auth", "none",
                "--disable-telemetry",
                "--disable-update-check",
                "--disable-workspace-trust",
                "--disable-getting-started-override",
                "--ignore-last-opened",
                str(self.ws),
            ),
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            # Its own process group: stopped with the extension host and the language server.
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        url = None
        lines = []

        def pump():
            for line in self.server.stdout:
                log.write(line)
                log.flush()
                lines.append(line)

        threading.Thread(target=pump, daemon=True).start()
        while time.monotonic() < deadline and url is None:
            for line in list(lines):
                m = re.search(r"HTTP server listening on (http://127\.0\.0\.1:\d+/)", line)
                if m:
                    url = m.group(1)
            if self.server.poll() is not None:
                break
            time.sleep(0.1)
        if url is None:
            raise SystemExit("code-server did not say where it listens within 60 s:\n" + "".join(lines))
        return url

    def stop(self):
        """Ends code-server and every process it started (its group)."""
        if self.server is None:
            return
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.server.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.server.wait(wait)
            except subprocess.TimeoutExpired:
                continue
            # The group may outlive its leader for a moment.
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                try:
                    os.killpg(self.server.pid, 0)
                except ProcessLookupError:
                    return
                time.sleep(0.1)


# --- what a user does on the page -----------------------------------------------------------

def command(page: Page, title: str):
    """Runs a command from the command palette, typed as a user types it."""
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input")
    expect(box).to_be_visible(timeout=STEP_MS)
    box.fill(">" + title)
    row = page.locator(".quick-input-list .monaco-list-row", has_text=title).first
    expect(row).to_be_visible(timeout=STEP_MS)
    row.click()


def open_file(page: Page, name: str):
    """Opens a file of the workspace by Quick Open."""
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input")
    expect(box).to_be_visible(timeout=STEP_MS)
    box.fill(name)
    # Clicked rather than Enter: the list may still show the recently opened files for a moment.
    row = page.locator(".quick-input-list .monaco-list-row", has_text=name).first
    expect(row).to_be_visible(timeout=STEP_MS)
    row.click()
    expect(page.locator(".tabs-container .tab.active", has_text=name)).to_be_visible(timeout=STEP_MS)


def go_to(page: Page, line: int, column: int):
    """Puts the cursor at LINE:COLUMN of the active editor (Go to Line/Column)."""
    page.keyboard.press("Control+G")
    box = page.locator(".quick-input-widget input")
    expect(box).to_be_visible(timeout=STEP_MS)
    box.fill(f":{line}:{column}")
    page.keyboard.press("Enter")
    expect(box).to_be_hidden(timeout=STEP_MS)


def notifications(page: Page) -> list[str]:
    """The notifications on the page (an extension's errors are there), for a failure's report."""
    try:
        rows = page.locator(".notifications-toasts .notification-list-item-message")
        return [t.strip() for t in rows.all_inner_texts() if t.strip()]
    except Exception:  # noqa: BLE001 - only a report
        return []


# --- the cases ------------------------------------------------------------------------------

def case_problems(page: Page, run: Run):
    """The misspelt key's diagnostics are in the Problems panel: the condition's (an error, from
    the rule) and the settings file's (a warning)."""
    open_file(page, RULE_NAME)
    command(page, "View: Focus Problems")
    panel = page.locator(".markers-panel")
    expect(panel).to_be_visible(timeout=STEP_MS)
    rule = panel.locator(".monaco-list-row", has_text="dcoo")
    expect(rule.first).to_be_visible(timeout=START_MS)
    text = rule.first.inner_text()
    assert "PR101" in text, f"the Problems row for `dcoo` does not name PR101: {text!r}"
    # The status bar item is red while `check` has an error.
    expect(status_item(page)).to_have_class(re.compile(r"\berror-kind\b"), timeout=STEP_MS)
    # The settings file's unknown key: reported once the file is open.
    open_file(page, "pi-config-settings.json")
    setting = panel.locator(".monaco-list-row", has_text="use_worktree")
    expect(setting.first).to_be_visible(timeout=STEP_MS)
    text = setting.first.inner_text()
    assert "PR703" in text and "use_worktrees" in text, f"the Problems row for `use_worktree`: {text!r}"


def case_quick_fix(page: Page, run: Run):
    """The condition's quick fix, from the light bulb's menu (Ctrl+.), changes the text; saved,
    the file on disk has it."""
    open_file(page, RULE_NAME)
    go_to(page, 3, 7)
    page.keyboard.press("Control+.")
    fix = page.locator(".action-widget .monaco-list-row", has_text="replace `dcoo` with `dco`")
    expect(fix.first).to_be_visible(timeout=STEP_MS)
    fix.first.click()
    view = page.locator(".editor-group-container.active .monaco-editor .view-lines").first
    expect(view).to_contain_text("{{IF:dco}}", timeout=STEP_MS)
    expect(view).not_to_contain_text("IF:dcoo", timeout=STEP_MS)
    # The inlay hint after the condition (the view's text has it inline) says what it does now.
    expect(view).to_contain_text("kept: dco = true", timeout=STEP_MS)
    page.keyboard.press("Control+S")
    path = run.ws / ".pi" / "rules" / RULE_NAME
    deadline = time.monotonic() + STEP_MS / 1000
    while path.read_text() != FIXED and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert path.read_text() == FIXED, f"{path} after the fix and a save: {path.read_text()!r}"
    # And the diagnostic is gone from the Problems panel.
    command(page, "View: Focus Problems")
    expect(page.locator(".markers-panel .monaco-list-row", has_text="dcoo")).to_have_count(0, timeout=STEP_MS)


def case_hover(page: Page, run: Run):
    """Hovering the key in the condition shows its value and the file it comes from."""
    open_file(page, RULE_NAME)
    go_to(page, 3, 7)
    # Show or Focus Hover (Ctrl+K Ctrl+I), at the cursor.
    page.keyboard.press("Control+K")
    page.keyboard.press("Control+I")
    hover = page.locator(".monaco-hover:visible").first
    expect(hover).to_contain_text(re.compile(r"Now:\s*true"), timeout=STEP_MS)
    expect(hover).to_contain_text("pi-config-settings.json", timeout=STEP_MS)
    page.keyboard.press("Escape")


def case_explain(page: Page, run: Run):
    """pi-rules: Explain, from the command palette, with the rule open: explain's report on it,
    in an editor: the condition kept (the quick fix was saved), with the value's source."""
    open_file(page, RULE_NAME)
    command(page, "pi-rules: Explain")
    tab = page.locator(".tabs-container .tab.active", has_text="explain")
    expect(tab).to_be_visible(timeout=STEP_MS)
    view = page.locator(".editor-group-container.active .monaco-editor .view-lines").first
    expect(view).to_contain_text(RULE_NAME, timeout=STEP_MS)
    expect(view).to_contain_text("{{IF:dco}} kept", timeout=STEP_MS)
    expect(view).to_contain_text("pi-config-settings.json", timeout=STEP_MS)


def status_item(page: Page):
    return page.locator(".statusbar-item", has_text=re.compile(r"tokens · \d+ rules")).first


def case_status_bar(page: Page, run: Run):
    """The status bar item: the block's rule count, as `explain` counts it (run here with the
    binary the extension shipped), and no longer red now that the fix removed the error."""
    shipped = next(run.extensions.glob("pi-rules.pi-rules-*/bin/pi-rules"))
    report = subprocess.run(
        [str(shipped), "explain", "--cwd", str(run.ws), "--format", "json"],
        env=run.env, capture_output=True, text=True, timeout=60, check=True,
    )
    rules = json.loads(report.stdout)["totals"]["included"]
    item = status_item(page)
    expect(item).to_contain_text(f"tokens · {rules} rules", timeout=STEP_MS)
    expect(item).not_to_have_class(re.compile(r"\berror-kind\b"), timeout=STEP_MS)


def editor_view(page: Page):
    """The text the active editor shows (its visible lines; inlay hints inline)."""
    return page.locator(".editor-group-container.active .monaco-editor .view-lines").first


def cursor_item(page: Page):
    """The status bar's `Ln L, Col C` of the active editor."""
    return page.locator(".statusbar-item", has_text=re.compile(r"Ln \d+, Col \d+")).first


def case_completion(page: Page, run: Run):
    """Typing `{{IF:` on a new line of a rule opens the suggest widget with the settings' keys;
    the one clicked is inserted after `IF:`. The edit is then reverted (the file is unchanged)."""
    open_file(page, RULE_NAME)
    page.keyboard.press("Control+End")
    page.keyboard.press("Enter")
    page.keyboard.type("{{IF:")
    widget = page.locator(".editor-widget.suggest-widget")
    try:
        # `dco` is set in the settings file; `use_worktrees` is the key its `use_worktree` misspells.
        expect(widget.locator(".monaco-list-row .label-name", has_text=re.compile(r"^dco$"))).to_be_visible(timeout=STEP_MS)
        key = widget.locator(".monaco-list-row", has_text="use_worktrees").first
        expect(key).to_be_visible(timeout=STEP_MS)
        key.click()
        expect(widget).to_be_hidden(timeout=STEP_MS)
        expect(editor_view(page)).to_contain_text("{{IF:use_worktrees", timeout=STEP_MS)
    except Exception:
        # The later cases read the rule as saved: the typing is undone after a failure too.
        page.keyboard.press("Escape")
        try:
            command(page, "File: Revert File")
        except Exception:  # noqa: BLE001 - the first failure is the one reported
            pass
        raise
    command(page, "File: Revert File")
    expect(editor_view(page)).not_to_contain_text("use_worktrees", timeout=STEP_MS)
    path = run.ws / ".pi" / "rules" / RULE_NAME
    assert path.read_text() == FIXED, f"{path} after a reverted completion: {path.read_text()!r}"


def case_show_block(page: Page, run: Run):
    """pi-rules: Show the assembled block opens the block in an editor; it holds the project
    rule's conditional line (the package rules come first: Find scrolls to it)."""
    open_file(page, RULE_NAME)
    command(page, "pi-rules: Show the assembled block")
    expect(page.locator(".tabs-container .tab.active", has_text="assembled block.md")).to_be_visible(timeout=STEP_MS)
    line = "Sign every commit."
    page.keyboard.press("Control+F")
    find = page.locator(".editor-group-container.active .find-widget.visible")
    expect(find).to_be_visible(timeout=STEP_MS)
    find.locator("textarea").first.fill(line)
    expect(find.locator(".matchesCount")).to_have_text(re.compile(r"^1 of \d+$"), timeout=STEP_MS)
    expect(editor_view(page)).to_contain_text(line, timeout=STEP_MS)
    page.keyboard.press("Escape")
    expect(find).to_be_hidden(timeout=STEP_MS)


def case_new_rule(page: Page, run: Run):
    """pi-rules: New rule asks for a name in an input box; the rule file it creates in the
    project layer is on disk and open, its text in the editor."""
    path = run.ws / ".pi" / "rules" / f"{NEW_RULE}.md"
    assert not path.exists(), f"{path} exists before the command"
    open_file(page, RULE_NAME)
    command(page, "pi-rules: New rule")
    box = page.locator(".quick-input-widget input")
    # The command's own input box (not the palette it was run from): its placeholder.
    expect(box).to_have_attribute("placeholder", "team-conventions", timeout=STEP_MS)
    expect(page.locator(".quick-input-widget")).to_contain_text("The new rule's name", timeout=STEP_MS)
    box.fill(NEW_RULE)
    page.keyboard.press("Enter")
    expect(page.locator(".tabs-container .tab.active", has_text=f"{NEW_RULE}.md")).to_be_visible(timeout=STEP_MS)
    assert path.is_file(), f"no {path} after pi-rules: New rule"
    first = next(line for line in path.read_text().splitlines() if line.strip())
    expect(editor_view(page)).to_contain_text(first, timeout=STEP_MS)


def case_outline(page: Page, run: Run):
    """The rule's outline (Go to Symbol in Editor, `@` in Quick Open, as Ctrl+Shift+O opens it)
    lists its block; choosing it puts the cursor on the block's line."""
    open_file(page, RULE_NAME)
    go_to(page, 1, 1)
    expect(cursor_item(page)).to_contain_text("Ln 1, Col 1", timeout=STEP_MS)
    page.keyboard.press("Control+P")
    box = page.locator(".quick-input-widget input")
    expect(box).to_be_visible(timeout=STEP_MS)
    box.fill("@")
    row = page.locator(".quick-input-list .monaco-list-row", has_text="IF dco").first
    expect(row).to_be_visible(timeout=STEP_MS)
    row.click()
    expect(box).to_be_hidden(timeout=STEP_MS)
    expect(cursor_item(page)).to_contain_text(re.compile(r"Ln 3, Col \d+"), timeout=STEP_MS)


def case_definition(page: Page, run: Run):
    """Go to Definition (F12) on the condition's key opens the settings file at its line."""
    open_file(page, RULE_NAME)
    go_to(page, 3, 7)
    page.keyboard.press("F12")
    expect(page.locator(".tabs-container .tab.active", has_text="pi-config-settings.json")).to_be_visible(timeout=STEP_MS)
    line = 1 + SETTINGS.splitlines().index('  "dco": true,')
    expect(cursor_item(page)).to_contain_text(re.compile(rf"Ln {line}, Col \d+"), timeout=STEP_MS)


def host_of(request_line: str) -> str:
    """The host a proxy request line asks for: `CONNECT host:443 ...`, `GET http://host/...`."""
    parts = request_line.split()
    if len(parts) < 2:
        return request_line
    return parts[1].split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]


def case_loopback_only(page: Page, run: Run):
    """code-server and the extension asked for nothing outside the machine: their recording
    proxy saw no request."""
    assert run.recorder.seen == [], f"code-server's requests for the network: {run.recorder.seen}"
    hosts = sorted({host_of(request) for request in run.browser_recorder.seen})
    if hosts:
        print(f"        (Chromium's own background requests, not code-server's, went to the recorder and no further: {', '.join(hosts)})")


CASES = [
    case_problems, case_quick_fix, case_hover, case_explain, case_status_bar,
    case_completion, case_show_block, case_new_rule, case_outline, case_definition,
    case_loopback_only,
]


def chromium_args(recorder: Recorder):
    args = [
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        # Everything but loopback (which Chromium never sends to a proxy) goes to the recorder.
        f"--proxy-server={recorder.url}",
    ]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    return args


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--vsix", required=True)
    p.add_argument("--code-server", required=True)
    p.add_argument("--node-bin", required=True)
    p.add_argument("--chromium", required=True)
    args = p.parse_args()

    run = Run(args)
    passed = failed = 0
    started = time.monotonic()
    try:
        run.install()
        url = run.start()
        print(f"code-server at {url} (workspace {run.ws})")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=args.chromium, args=chromium_args(run.browser_recorder), timeout=60_000
            )
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(STEP_MS)
            page.goto(f"{url}?folder={run.ws}", timeout=START_MS)
            expect(page.locator(".monaco-workbench")).to_be_visible(timeout=START_MS)
            # The explorer shows the folder: the workbench is up.
            expect(page.locator(".explorer-folders-view")).to_be_visible(timeout=START_MS)
            print(f"VS Code is up in the browser after {time.monotonic() - started:.1f} s")
            for case in CASES:
                name = case.__name__.removeprefix("case_")
                t0 = time.monotonic()
                try:
                    case(page, run)
                    passed += 1
                    print(f"ok      {name} ({time.monotonic() - t0:.1f} s)")
                except Exception as e:  # noqa: BLE001 - every failure is reported, and the run goes on
                    failed += 1
                    run.keep = True
                    shot = run.shots / f"{name}.png"
                    try:
                        page.screenshot(path=str(shot))
                        where = f"screenshot: {shot}"
                    except Exception as shot_error:  # noqa: BLE001
                        where = f"no screenshot ({shot_error})"
                    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                    print(f"FAILED  {name} ({time.monotonic() - t0:.1f} s): {first}\n        {where}")
                    for note in notifications(page):
                        print(f"        notification: {note}")
                    detail = "".join(traceback.format_exception(e))
                    (run.shots / f"{name}.txt").write_text(detail)
                    # Close whatever the failure left open before the next case.
                    page.keyboard.press("Escape")
            browser.close()
    except (Exception, SystemExit) as e:  # noqa: BLE001 - set-up failed: say so, keep the folder
        run.keep = True
        print(f"FAILED  set-up: {e}")
        failed = max(failed, 1)
    finally:
        run.stop()
    print(f"{time.monotonic() - started:.1f} s with code-server and the browser")
    if run.keep:
        print(f"kept for a look: {run.tmp} (code-server.log, user-data/logs (the pi-rules output channel), screenshots/)")
    else:
        shutil.rmtree(run.tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
