"""A server on this machine that answers the two CloudFormation reads the deploy commands make.

moto's CloudFormation needs extras this suite does not install, and would
try to create the stack's resources; `make rollback` and `make outputs` only
read a deployed stack. So this answers DescribeStacks and GetTemplate in
CloudFormation's query protocol (XML), for stacks a test puts in, and the
commands reach it through real boto3, which parses each reply.
"""

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape


@dataclass
class DeployedStack:
    outputs: dict[str, str]
    template: dict[str, Any]


@dataclass
class CloudFormationApi:
    stacks: dict[str, DeployedStack] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    url: str = ""

    def answer(self, form: dict[str, str]) -> tuple[int, str]:
        action, name = form.get("Action", ""), form.get("StackName", "")
        self.calls.append(action)
        stack = self.stacks.get(name)
        if stack is None:
            return 400, _error("ValidationError", f"Stack with id {name} does not exist")
        if action == "DescribeStacks":
            outputs = "".join(
                f"<member><OutputKey>{escape(key)}</OutputKey>"
                f"<OutputValue>{escape(value)}</OutputValue></member>"
                for key, value in stack.outputs.items()
            )
            body = (
                f"<Stacks><member><StackName>{escape(name)}</StackName>"
                f"<StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/{escape(name)}/1"
                "</StackId><CreationTime>2026-12-01T00:00:00Z</CreationTime>"
                f"<StackStatus>UPDATE_COMPLETE</StackStatus><Outputs>{outputs}</Outputs>"
                "</member></Stacks>"
            )
        elif action == "GetTemplate":
            body = f"<TemplateBody>{escape(json.dumps(stack.template))}</TemplateBody>"
        else:
            return 400, _error("InvalidAction", f"{action} is not answered here")
        return 200, (
            f'<{action}Response xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">'
            f"<{action}Result>{body}</{action}Result>"
            "<ResponseMetadata><RequestId>test</RequestId></ResponseMetadata>"
            f"</{action}Response>"
        )


def _error(code: str, message: str) -> str:
    return (
        '<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">'
        f"<Error><Type>Sender</Type><Code>{code}</Code><Message>{escape(message)}</Message>"
        "</Error><RequestId>test</RequestId></ErrorResponse>"
    )


def start_cloudformation_api() -> tuple[CloudFormationApi, ThreadingHTTPServer]:
    """The server, listening on a port the OS chose, and its state."""
    api = CloudFormationApi()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = {
                key: values[0]
                for key, values in parse_qs(self.rfile.read(length).decode()).items()
            }
            status, reply = api.answer(form)
            data = reply.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    # Polled every 10 ms: shutdown() waits for the loop's next look, 0.5 s by default.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return api, server
