"""What the stand-ins share: a small HTTP server, and reading the forms of their pages.

Each stand-in answers a Request with a Response; `serve` puts it on a
port the OS chose, on 127.0.0.1 only. `forms` reads a page as a browser
would see its buttons, so that a test (an HTTP client keeping cookies)
can press one: each button of a stand-in's page is a form of its own.
"""

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names in lower case
    body: bytes

    def form(self) -> dict[str, str]:
        """An HTML form's fields (application/x-www-form-urlencoded)."""
        return dict(parse_qsl(self.body.decode("utf-8", "replace"), keep_blank_values=True))

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()


def json_response(status: int, data: Any, *headers: tuple[str, str]) -> Response:
    return Response(status, json.dumps(data).encode(), "application/json", headers)


def page(status: int, title: str, *paragraphs: str, forms: str = "") -> Response:
    """A plain HTML page; paragraphs are text (escaped here), forms HTML already built."""
    text = "".join(f"<p>{escape(each)}</p>" for each in paragraphs)
    html = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"</head><body><h1>{escape(title)}</h1>{text}{forms}</body></html>"
    )
    return Response(status, html.encode(), "text/html; charset=utf-8")


def button(action: str, label: str, **fields: str) -> str:
    """A form of its own for one button, its fields hidden: a POST to action."""
    hidden = "".join(
        f"<input type='hidden' name='{escape(name)}' value='{escape(value)}'>"
        for name, value in fields.items()
    )
    return (
        f"<form method='post' action='{escape(action)}'>{hidden}"
        f"<button type='submit'>{escape(label)}</button></form>"
    )


def redirect(location: str, *headers: tuple[str, str]) -> Response:
    return Response(302, b"", headers=(("Location", location), *headers))


def serve(
    answer: Callable[[Request], Response], host: str = "127.0.0.1", port: int = 0
) -> tuple[str, ThreadingHTTPServer]:
    """A server answering every GET and POST with answer(request); its URL, and the server."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            request = Request(
                self.command,
                parts.path,
                dict(parse_qsl(parts.query, keep_blank_values=True)),
                {name.lower(): value for name, value in self.headers.items()},
                self.rfile.read(length) if length else b"",
            )
            try:
                response = answer(request)
            except Exception as failure:  # a stand-in's bug: say so, do not hang the client
                response = Response(500, f"{type(failure).__name__}: {failure}".encode())
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            for name, value in response.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the stand-ins record their calls; a log would only be noise

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    # Polled every 10 ms: shutdown() waits for the loop's next look, 0.5 s by default.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return f"http://{host}:{server.server_address[1]}", server


@dataclass
class Form:
    """One form of a page: where it goes, how, its fields, and the text of its button."""

    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)
    label: str = ""


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[Form] = []
        self._open: Form | None = None
        self._in_button = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {name: value or "" for name, value in attrs}
        if tag == "form":
            self._open = Form(named.get("action", ""), named.get("method", "get").upper())
        elif tag == "input" and self._open is not None and "name" in named:
            self._open.fields[named["name"]] = named.get("value", "")
        elif tag == "button" and self._open is not None:
            self._in_button = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "button":
            self._in_button = False
        elif tag == "form" and self._open is not None:
            self.found.append(self._open)
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._in_button and self._open is not None:
            self._open.label += data


def forms(html: str) -> list[Form]:
    """The forms of a page, in order, as a browser would submit them."""
    parser = _Forms()
    parser.feed(html)
    return parser.found


def form_labelled(html: str, label: str) -> Form:
    """The form whose button reads label; LookupError names the buttons there are."""
    found = forms(html)
    for each in found:
        if each.label.strip() == label:
            return each
    raise LookupError(f"no button {label!r} on the page: {[each.label for each in found]}")
