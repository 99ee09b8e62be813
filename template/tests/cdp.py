"""A headless Chromium driven over the DevTools protocol through a pipe: no library, no download.

The playground's tests need a real browser, and nothing that downloads
one: Debian's `chromium` (or Chrome, or the program PLAYGROUND_BROWSER
names) is started with --remote-debugging-pipe, which speaks the DevTools
protocol as NUL-separated JSON on file descriptors 3 and 4, so the
standard library is all it takes. Clicks and keys are the browser's own
input events, sent where the element is on the screen, as a person's are.
"""

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

# The page-side halves of Page's methods: JavaScript functions, called with JSON arguments.
WAIT_FOR = """(source, milliseconds) => new Promise((resolve, reject) => {
    const condition = new Function("return (" + source + ");");
    const until = performance.now() + milliseconds;
    const check = () => {
        let value;
        try { value = condition(); } catch (error) { value = undefined; }
        if (value) resolve(value);
        else if (performance.now() > until) reject(new Error("still waiting: " + source));
        else requestAnimationFrame(check);
    };
    check();
})"""
CENTRE_OF = """(selector, wanted) => {
    const all = [...document.querySelectorAll(selector)].filter((each) => each.offsetParent);
    const one = wanted === null ? all[all.length - 1]
        : all.reverse().find((each) => each.textContent.trim() === wanted);
    if (!one) return null;
    one.scrollIntoView({block: "center"});
    // A link that wraps is boxes on two lines, and the middle of both may be neither: the first.
    const box = one.getClientRects()[0] || one.getBoundingClientRect();
    return [box.x + box.width / 2, box.y + box.height / 2];
}"""
CHOOSE = """(selector, value) => {
    const select = document.querySelector(selector);
    select.value = value;
    select.dispatchEvent(new Event("change", {bubbles: true}));
}"""
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
TIMEOUT = 60.0


def find_browser() -> str | None:
    """The browser to drive: PLAYGROUND_BROWSER, else the first Chromium or Chrome on PATH."""
    named = os.environ.get("PLAYGROUND_BROWSER")
    if named:
        return shutil.which(named) or named
    return next(filter(None, map(shutil.which, CANDIDATES)), None)


class BrowserError(RuntimeError):
    """The browser answered a command with an error, or not at all."""


class Browser:
    """One headless browser process; `page()` opens a tab of it."""

    def __init__(self, executable: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="playground-browser-")
        commands_read, self._commands = os.pipe()
        self._replies, replies_write = os.pipe()

        def onto_3_and_4() -> None:  # in the child: the pipe's ends where Chromium looks
            into, out = (
                fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (commands_read, replies_write)
            )
            os.dup2(into, 3)
            os.dup2(out, 4)

        flags = [
            "--headless=new",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--mute-audio",
            "--force-device-scale-factor=1",
            # Its sandbox refuses root, and CI runners that restrict user
            # namespaces; the only page it opens is the playground's own.
            "--no-sandbox",
        ]
        self.process = subprocess.Popen(
            [executable, *flags, "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=onto_3_and_4,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(replies_write)
        self._next = 0
        self._lock = threading.Lock()
        self._waiting: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._listeners: list[tuple[str, queue.Queue[dict[str, Any]]]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._replies, 1 << 16):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for raw in messages:
                message = json.loads(raw)
                if "id" in message:
                    self._waiting.pop(message["id"]).put(message)
                    continue
                with self._lock:
                    listeners = list(self._listeners)
                for method, inbox in listeners:
                    if message.get("method") == method:
                        inbox.put(message)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send a command and return its result."""
        with self._lock:
            self._next += 1
            number = self._next
            inbox: queue.Queue[dict[str, Any]] = queue.Queue()
            self._waiting[number] = inbox
            command: dict[str, Any] = {"id": number, "method": method, "params": params}
            if session:
                command["sessionId"] = session
            os.write(self._commands, json.dumps(command).encode() + b"\0")
        try:
            reply = inbox.get(timeout=TIMEOUT)
        except queue.Empty:
            raise BrowserError(f"{method}: no answer in {TIMEOUT:.0f} s") from None
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply["result"]

    def listen(self, method: str) -> "queue.Queue[dict[str, Any]]":
        """A queue of every event of this method from now on."""
        inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        with self._lock:
            self._listeners.append((method, inbox))
        return inbox

    def page(self, width: int = 1280, height: int = 860) -> "Page":
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        return self.attach(target, width, height)

    def attach(self, target: str, width: int = 1280, height: int = 860) -> "Page":
        """The tab of this target id (one the browser opened itself, say), to drive."""
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session, target)
        page.call("Page.enable")
        page.call("Runtime.enable")
        page.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return page

    def close(self) -> None:
        with contextlib.suppress(BrowserError, OSError):
            self.call("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._commands, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)


class Page:
    """One tab: load a URL, run JavaScript, wait for what the page shows, click and type."""

    def __init__(self, browser: Browser, session: str, target: str) -> None:
        self.browser = browser
        self.session = session
        self.target = target

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.browser.call(method, self.session, **params)

    def goto(self, url: str) -> None:
        loaded = self.browser.listen("Page.loadEventFired")
        self.call("Page.navigate", url=url)
        loaded.get(timeout=TIMEOUT)

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited), or BrowserError."""
        result = self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise BrowserError(details.get("exception", {}).get("description") or str(details))
        return result["result"].get("value")

    def wait_for(self, condition: str, timeout: float = 60.0) -> Any:
        """The first truthy value of a JavaScript expression, checked at every animation frame.

        The waiting is the browser's: it resolves the moment the page shows
        it, with no sleep on this side.
        """
        return self.evaluate(f"({WAIT_FOR})({json.dumps(condition)}, {timeout * 1000})")

    def _centre_of(self, selector: str, text: str | None) -> tuple[float, float]:
        found = f"({CENTRE_OF})({json.dumps(selector)}, {json.dumps(text)})"
        centre = self.wait_for(found)
        return float(centre[0]), float(centre[1])

    def click(self, selector: str, text: str | None = None) -> None:
        """Click the last visible element matching the selector (and whose text is `text`)."""
        x, y = self._centre_of(selector, text)
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def click_opening_a_tab(self, selector: str, text: str | None = None) -> "Page":
        """Click a link that opens in a new tab (target=_blank), as a person would; that tab."""
        opened = self.browser.listen("Target.targetCreated")
        self.browser.call("Target.setDiscoverTargets", discover=True)
        self.click(selector, text)
        while True:
            try:
                created = opened.get(timeout=TIMEOUT)["params"]["targetInfo"]
            except queue.Empty:
                raise BrowserError(f"no tab opened by clicking {selector}") from None
            if created["type"] == "page" and created.get("openerId") == self.target:
                return self.browser.attach(created["targetId"])

    def wait_across_loads(self, condition: str, timeout: float = 60.0) -> Any:
        """wait_for, through the page's navigations: a form's post and the redirects after it.

        A load throws away the document the condition was waiting in, so it
        is asked again of the next one, until the time is up.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.wait_for(condition, max(deadline - time.monotonic(), 0.5))
            except BrowserError:
                if time.monotonic() >= deadline:
                    raise

    def text(self) -> str:
        """What the page says, as a person reads it."""
        return str(self.evaluate("document.body ? document.body.innerText : ''"))

    def type(self, selector: str, text: str) -> None:
        """Click into the element and type the text, as a keyboard would insert it."""
        self.click(selector)
        self.call("Input.insertText", text=text)

    def press(self, key: str = "Enter", modifiers: int = 0) -> None:
        codes = {"Enter": 13, "Tab": 9, "Escape": 27}
        event = {
            "key": key,
            "code": key,
            "windowsVirtualKeyCode": codes[key],
            "modifiers": modifiers,
        }
        text = {"text": "\r"} if key == "Enter" else {}
        self.call("Input.dispatchKeyEvent", type="keyDown", **event, **text)
        self.call("Input.dispatchKeyEvent", type="keyUp", **event)

    def choose(self, selector: str, value: str) -> None:
        """Pick an option of a <select>, as the page would see a person pick it."""
        self.evaluate(f"({CHOOSE})({json.dumps(selector)}, {json.dumps(value)})")

    def attach(self, selector: str, *paths: Path) -> None:
        """Put files in a file input, as the file chooser would."""
        node = self.call("DOM.getDocument")["root"]["nodeId"]
        found = self.call("DOM.querySelector", nodeId=node, selector=selector)["nodeId"]
        self.call("DOM.setFileInputFiles", nodeId=found, files=[str(path) for path in paths])

    def downloads_into(self, folder: Path) -> "queue.Queue[dict[str, Any]]":
        """Save downloads into the folder; the queue gets each download's progress events."""
        progress = self.browser.listen("Browser.downloadProgress")
        self.browser.call(
            "Browser.setDownloadBehavior",
            behavior="allowAndName",
            downloadPath=str(folder),
            eventsEnabled=True,
        )
        return progress

    def screenshot(self, path: Path) -> None:
        shot = self.call("Page.captureScreenshot", format="png")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        with contextlib.suppress(BrowserError):
            self.browser.call("Target.closeTarget", targetId=self.target)
