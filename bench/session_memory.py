"""The memory one AgentCore session costs: the server's resident memory after its first reply.

On AgentCore each Slack thread is a session of its own, a microVM whose
size is chosen by memory, so what the agent's process holds once it has
answered is what every session pays for. The local server, and a session
that lives long, serve many threads from that one process: whatever a
thread leaves behind (a cache that never lets go, an agent kept per
thread, a client per request) adds up there. So this reads the server's
resident memory (VmRSS, /proc/<pid>/status, Linux) after its first reply,
and again after N more threads.

Three sides, each a fresh server process on the project's interpreter,
all with the same scripted model (a short text reply to every call), as
bench/first_reply.py sets them up:
- floor: a BedrockAgentCoreApp entrypoint that builds a fresh Strands Agent
  with the scripted model per request: the least a Strands agent on
  AgentCore holds.
- default: the default project's app, built by the package's factory as
  main.py builds it, with the scripted model for its model.
- rich: the same app of a project rendered with the S3 run store, AgentCore
  Memory, MCP and agent-managed history, each reached over HTTP on this
  machine as on AgentCore: a bucket of moto's S3 server and the seal's key
  in a secret on it, a memory of the project's local Memory API (both
  started by the project's own tests/conftest.py, in a helper process of
  the project's environment), and the project's MCP demo server over
  streamable HTTP, listed in its yours/mcp_servers.py. Requests carry a
  verified Slack user, so every turn recalls and remembers.

Each run starts a server and waits for GET /ping (memory read "at /ping"),
sends the first turn of a thread as first_reply.py does and reads the
memory once the reply has ended ("after the first reply"). Then it sends
N more threads of two turns, one after the other, each with a session id of
its own; the second turn resends the thread so far (the rich side sends
only the new message, as Welt does with AGENT_MANAGES_HISTORY=true), and
reads the memory again: the growth is that reading less the one after the
first reply. Runs alternate between the sides, the one that goes first
rotating; medians over the runs.

Targets: default and rich at most 96 MiB after the first reply; at most
2 MiB of growth after the N threads.

    uv run python bench/session_memory.py [runs] [threads] [--smoke]  # default 5 40; --smoke 1 2
"""

import contextlib
import json
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import httpx
from _project import (
    Server,
    arguments,
    built,
    free_port,
    median,
    rendered_project,
    rendered_template,
    running,
    seconds_to_ping,
    serve,
    uv_env,
)
from first_reply import FLOOR, GENERATED

REPLY = "Hello from a scripted model."

RICH = {
    "run_store": "s3",
    "state_bucket": "my-bucket",
    "memory": "agentcore",
    "include_mcp": True,
    "agent_manages_history": True,
}

# The verified Slack user every request comes from: without one the rich
# side's memory would neither recall nor remember (memory/per_user.py).
USER = "slack:T0BENCH:U0BENCH"

# Runs in the rich project's tests/ folder with its interpreter: its own
# conftest starts moto's S3 server and the local Memory API, as its tests
# do, so the bench follows the project's test servers wherever they go.
# It prints the environment that points the app at them, then answers each
# line on stdin with the requests they have had, until stdin closes.
SERVICES = """
import json
import sys

import conftest

environment = {
    **conftest.new_bucket(sys.argv[1]),
    **conftest.new_memory()[1],
    **conftest.new_run_key_secret(),
}
print(json.dumps(environment), flush=True)
for _ in sys.stdin:
    requests = {
        "s3": len(conftest._s3[2].requests),
        "memory": len(conftest._memory_api[0].calls),
    }
    print(json.dumps(requests), flush=True)
"""

MIB = 1024 * 1024


class Side(NamedTuple):
    project: Path
    script: str
    env: dict[str, str]
    resends: bool  # the second turn carries the thread so far; else only the new message


class Reading(NamedTuple):
    """Resident memory in bytes at three moments of one run."""

    ping: int
    first: int  # after the first reply
    threads: int  # after the N threads that follow

    @property
    def growth(self) -> int:
        return self.threads - self.first


def resident(pid: int) -> int:
    """The process's resident set in bytes (VmRSS: what it holds in RAM now)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status has no VmRSS")


def said(client: httpx.Client, session: str, messages: list[dict]) -> str:
    """One POST /invocations read to its end: the reply's text, failing on an error event.

    The memory is read only once the response is over and the server has
    nothing of the request left to do but what it does after the reply.
    """
    headers = {
        "Accept": "text/event-stream",
        "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session,
        "X-Amzn-Bedrock-AgentCore-Runtime-User-Id": USER,
    }
    text = []
    with client.stream(
        "POST", "/invocations", json={"messages": messages}, headers=headers
    ) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: "):
                event = json.loads(line.removeprefix("data: "))
                assert isinstance(event, dict) and "data" in event, f"{session}: {event!r}"
                text.append(event["data"])
    assert "".join(text) == REPLY, f"{session}: {''.join(text)!r}"
    return "".join(text)


def user(text: str) -> dict:
    return {"role": "user", "content": [{"text": f"<@U0BENCH>: {text}"}]}


def thread(client: httpx.Client, session: str, side: Side) -> None:
    """Two turns of one thread, the second as Welt sends it to this side."""
    first = [user("hello")]
    reply = said(client, session, first)
    again = user("and again")
    second = [*first, {"role": "assistant", "content": [{"text": reply}]}, again]
    said(client, session, second if side.resends else [again])


def settled(pid: int) -> int:
    """The memory once the work after a reply (memory's write, say) has had time to end."""
    time.sleep(0.2)
    return resident(pid)


def one_run(side: Side, label: str, threads: int) -> Reading:
    port = free_port()
    server = serve(side.project, side.script, port, **side.env)
    with running(server), httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        seconds_to_ping(client, server, time.perf_counter())
        at_ping = resident(server.pid)
        said(client, f"slack_T0BENCH_C0BENCH_{label}.000000", [user("hello")])
        first = settled(server.pid)
        for number in range(1, threads + 1):
            thread(client, f"slack_T0BENCH_C0BENCH_{label}.{number:06d}", side)
        return Reading(at_ping, first, settled(server.pid))


def rich_project() -> Path:
    """The rich rendering, its MCP server list naming the demo server at BENCH_MCP_URL."""
    root = rendered_template(**RICH)
    servers = root / "app" / "my_welt_agent" / "yours" / "mcp_servers.py"
    text = servers.read_text()
    opening = "MCP_SERVERS: list[Stdio | StreamableHttp] = [\n"
    assert opening in text, f"{servers} no longer opens its list with {opening!r}"
    demo = '    StreamableHttp("demo", os.environ["BENCH_MCP_URL"]),\n'
    servers.write_text(text.replace(opening, "import os\n\n" + opening + demo))
    return built(root)  # after the edit, so its bytecode is compiled too


def listening(port: int, process: Server, timeout: float = 60.0) -> None:
    """Wait until a helper accepts connections on the port; fail at once if it exits."""
    start = time.perf_counter()
    while True:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port)):
            return
        if process.poll() is not None:
            raise process.died(f"listening on port {port}")
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"{process.args!r:.100} did not listen within {timeout:.0f} s")
        time.sleep(0.02)


def services(project: Path) -> Server:
    """The helper that serves S3 and AgentCore Memory for the rich side (SERVICES)."""
    python = str(project / ".venv" / "bin" / "python")
    env = {**uv_env(), "PYTHONPATH": str(project / "app"), "AWS_EC2_METADATA_DISABLED": "true"}
    return Server(
        [python, "-c", SERVICES, "bench-session-memory"],
        cwd=project / "tests",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def answer(helper: Server, line: str | None = None) -> dict:
    """The helper's next JSON line, after sending it a line when one is given."""
    assert helper.stdin and helper.stdout
    if line is not None:
        helper.stdin.write(line + "\n")
        helper.stdin.flush()
    answered = helper.stdout.readline()
    if not answered:
        with contextlib.suppress(subprocess.TimeoutExpired):
            helper.wait(timeout=10)
        raise helper.died("answering")
    return json.loads(answered)


def mib(value: float) -> str:
    return f"{value / MIB:.1f} MiB"


def report(results: dict[str, list[Reading]], threads: int) -> None:
    runs = len(results["floor"])
    print(f"medians of {runs} runs per side; growth over {threads} threads of two turns each:")
    floor = median([r.first for r in results["floor"]])
    for name, readings in results.items():
        first = median([r.first for r in readings])
        over = "" if name == "floor" else f"  ({(first - floor) / MIB:+.1f} MiB over the floor)"
        print(
            f"  {name:<8} at /ping {mib(median([r.ping for r in readings]))}, "
            f"after the first reply {mib(first)}{over}; "
            f"growth {median([r.growth for r in readings]) / MIB:+.1f} MiB "
            f"(runs {min(r.growth for r in readings) / MIB:+.1f} to "
            f"{max(r.growth for r in readings) / MIB:+.1f})"
        )
    for name in ("default", "rich"):
        first = median([r.first for r in results[name]])
        growth = median([r.growth for r in results[name]])
        print(
            f"target {name}: after the first reply <= 96 MiB: "
            f"{'met' if first <= 96 * MIB else 'not met'} ({mib(first)}); "
            f"growth after {threads} threads <= 2 MiB: "
            f"{'met' if growth <= 2 * MIB else 'not met'} ({growth / MIB:+.1f} MiB)"
        )


def main(runs: int, threads: int) -> None:
    default = rendered_project()
    rich = rich_project()
    log = Path(tempfile.mkdtemp(prefix="bench-mcp-")) / "calls.log"
    mcp_port = free_port()
    demo = Server(
        [
            str(rich / ".venv" / "bin" / "python"),
            "tests/mcp_demo_server.py",
            "--http",
            str(mcp_port),
        ],
        cwd=rich,
        env={**uv_env(), "MCP_DEMO_LOG": str(log)},
    )
    helper = services(rich)
    with running(demo, helper):
        environment = answer(helper)
        listening(mcp_port, demo)
        environment["BENCH_MCP_URL"] = f"http://127.0.0.1:{mcp_port}/mcp"
        sides = {
            "floor": Side(default, FLOOR, {}, resends=True),
            "default": Side(default, GENERATED, {}, resends=True),
            "rich": Side(rich, GENERATED, environment, resends=False),
        }
        names = list(sides)
        results: dict[str, list[Reading]] = {name: [] for name in names}
        for run in range(runs):
            for name in names[run % 3 :] + names[: run % 3]:
                before = answer(helper, "requests?") if name == "rich" else None
                results[name].append(one_run(sides[name], f"{name}{run}", threads))
                if before is not None:  # the rich side did reach its services
                    after = answer(helper, "requests?")
                    assert after["s3"] > before["s3"], "the rich side never called S3"
                    assert after["memory"] > before["memory"], "nor AgentCore Memory"
                    assert "/mcp" in demo.tail(), "nor its MCP server"
            print(
                f"run {run + 1}: after the first reply "
                + ", ".join(f"{name} {mib(results[name][-1].first)}" for name in names)
                + "; growth "
                + ", ".join(f"{name} {results[name][-1].growth / MIB:+.1f} MiB" for name in names)
            )
    report(results, threads)


if __name__ == "__main__":
    given = arguments(__doc__, {"runs": (5, 1), "threads": (40, 2)})
    main(given.runs, given.threads)
