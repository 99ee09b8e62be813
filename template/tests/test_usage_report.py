"""`make usage`: the report's Logs Insights calls, answered by a server on this machine.

boto3 reaches it as it reaches CloudWatch Logs (AWS_ENDPOINT_URL_CLOUDWATCH_LOGS),
over HTTP, with the JSON protocol AWS speaks: nothing of boto3 is patched.
"""

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from conftest import PROJECT

pytestmark = pytest.mark.slow  # each test runs make usage as a process

ROWS = [
    {"startedBy": "slack:T1:UALICE", "sessionId": "thread-a", "day": "2026-01-05 00:00:00.000",
     "tokens": "1500", "usd": "0.0081", "unpriced": "0", "requests": "2"},
    {"startedBy": "slack:T1:UALICE", "sessionId": "thread-b", "day": "2026-01-06 00:00:00.000",
     "tokens": "500", "usd": "0.0019", "unpriced": "0", "requests": "1"},
    {"startedBy": "slack:T1:UBOB", "sessionId": "thread-c", "day": "2026-01-06 00:00:00.000",
     "tokens": "100", "usd": "0.0005", "unpriced": "0", "requests": "1"},
    {"startedBy": "slack:T1:UBOB", "sessionId": "thread-d", "day": "2026-01-06 00:00:00.000",
     "tokens": "70", "unpriced": "1", "requests": "1"},
]  # fmt: skip


class LogsInsights(BaseHTTPRequestHandler):
    """StartQuery and GetQueryResults, as CloudWatch Logs answers them (awsJson1.1)."""

    calls: ClassVar[list[tuple[str, dict]]] = []

    def do_POST(self) -> None:
        action = self.headers["X-Amz-Target"].split(".")[-1]
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.calls.append((action, request))
        if action == "StartQuery":
            answer: dict = {"queryId": "q-1"}
        else:
            results = [
                [{"field": name, "value": value} for name, value in row.items()] for row in ROWS
            ]
            answer = {"status": "Complete", "results": results, "statistics": {}}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def logs_insights():
    LogsInsights.calls = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), LogsInsights)
    # Polled every 10 ms: shutdown() waits for the loop's next look, 0.5 s by default.
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}", LogsInsights.calls
    server.shutdown()
    server.server_close()


def make_usage(endpoint: str, *arguments: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "AWS_ENDPOINT_URL_CLOUDWATCH_LOGS": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    return subprocess.run(
        ["make", "--no-print-directory", "usage", *arguments],
        cwd=PROJECT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_make_usage_prints_cost_per_person_thread_and_day(logs_insights):
    endpoint, calls = logs_insights

    made = make_usage(endpoint, "ENV=prod", "PERIOD=7d", "ARGS=--log-group=/aws/agent")

    assert made.returncode == 0, made.stderr
    person = made.stdout.split("Cost per person:")[1].split("Cost per thread:")[0]
    alice, bob = person.strip().splitlines()
    assert alice.split()[:2] == ["slack:T1:UALICE", "$0.0100"]
    assert bob.split()[:2] == ["slack:T1:UBOB", "$0.0005"]
    assert "thread-b" in made.stdout.split("Cost per thread:")[1]
    day = made.stdout.split("Cost per day:")[1]
    assert "2026-01-06" in day and "$0.0024" in day
    assert "1 requests used a model yours/model_prices.py does not price" in made.stdout
    assert "Logs Insights, log group /aws/agent" in made.stdout
    (start, start_args), (results, _) = calls[0], calls[-1]
    assert (start, results) == ("StartQuery", "GetQueryResults")
    assert start_args["logGroupName"] == "/aws/agent"
    assert start_args["endTime"] - start_args["startTime"] == 7 * 24 * 3600


def test_make_usage_refuses_a_period_it_cannot_read_in_one_line(logs_insights):
    endpoint, calls = logs_insights

    made = make_usage(endpoint, "ENV=prod", "PERIOD=soon", "ARGS=--log-group=/aws/agent")

    assert made.returncode == 2
    assert made.stderr.startswith("deploy: PERIOD must be a number of days or hours")
    assert calls == []
