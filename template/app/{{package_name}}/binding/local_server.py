"""The session-binding endpoint over plain HTTP on this machine, for the tests and the playground.

Each request becomes the Lambda function URL event (payload 2.0) that AWS
would hand the handler, and the handler's answer becomes the HTTP reply:
the endpoint's code runs exactly as deployed, only the transport differs.
Served on 127.0.0.1 only; its public URL is its own (http://127.0.0.1:<port>).

`python -m <package>.binding.local_server [--port N]` serves it with the
configuration the environment gives (endpoint.py's Config.from_environment).
"""

import argparse
import base64
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .endpoint import Endpoint
from .settings import Config, with_public_url


def function_url_event(
    method: str, target: str, headers: dict[str, str], body: bytes, host: str, source_ip: str
) -> dict[str, Any]:
    """The event a Lambda function URL would send for this request (payload format 2.0)."""
    parts = urlsplit(target)
    lowered = {name.lower(): value for name, value in headers.items() if name.lower() != "cookie"}
    cookies = [
        pair.strip()
        for value in [v for n, v in headers.items() if n.lower() == "cookie"]
        for pair in value.split(";")
        if pair.strip()
    ]
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path or "/",
        "rawQueryString": parts.query,
        "headers": lowered,
        "requestContext": {
            "domainName": host,
            "http": {
                "method": method,
                "path": parts.path or "/",
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": lowered.get("user-agent", ""),
            },
        },
        "isBase64Encoded": bool(body),
    }
    if cookies:
        event["cookies"] = cookies
    if body:
        event["body"] = base64.b64encode(body).decode()
    return event


def serve_endpoint(
    config: Config, host: str = "127.0.0.1", port: int = 0, identity: Any = None
) -> tuple[str, ThreadingHTTPServer, Endpoint]:
    """The endpoint served on a port the OS chose (or port); its URL, server and Endpoint.

    A configuration without a public URL gets the server's own. identity:
    the bedrock-agentcore client it completes consents with (the
    playground's, bound to its Identity stand-in); by default, boto3's.
    """
    holder: list[Endpoint] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            event = function_url_event(
                self.command,
                self.path,
                dict(self.headers.items()),
                self.rfile.read(length) if length else b"",
                self.headers.get("Host", ""),
                self.client_address[0],
            )
            answer = holder[0].handle(event)
            body = answer.get("body", "")
            data = base64.b64decode(body) if answer.get("isBase64Encoded") else body.encode()
            self.send_response(answer["statusCode"])
            for name, value in (answer.get("headers") or {}).items():
                self.send_header(name, value)
            for cookie in answer.get("cookies") or []:
                self.send_header("Set-Cookie", cookie)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the endpoint's audit lines say what matters

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    url = f"http://{host}:{server.server_address[1]}"
    served = config if config.public_url else with_public_url(config, url)
    holder.append(Endpoint(served, identity=identity))
    # Polled every 10 ms: shutdown() waits for the loop's next look, 0.5 s by default.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return url, server, holder[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args().port
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # the audit lines, as they come
    url, server, _ = serve_endpoint(Config.from_environment(), port=port)
    print(f"Serving the session-binding endpoint on {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
