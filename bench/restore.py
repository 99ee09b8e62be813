"""A new thread's first reply on an instance restored from an AgentCore V2 snapshot.

On platform V2, AgentCore starts the agent once, posts its warm-up
(POST /warmup), snapshots the process and restores the snapshot for every
new session. This bench measures, interleaved in one run on the default
project in rehearsal mode (MODEL_PROVIDER=rehearsal: the real tools, gate,
wire and storage, a scripted model, nothing over the network):

1. restored: the first POST /invocations of a Welt turn on an instance
   restored after the warm-up, until its stream ends. V2 is simulated as
   tests/restored_instances.py simulates it (and by running it): one process
   imports main, posts /warmup, keeps `random`'s state, then forks an
   instance per measurement that puts the state back and reports PID 1.
   The clock starts when the instance's port is known, as a restore's
   start is the platform's, not the agent's.
2. warm: the same request (the same turn, in another thread) sent next to
   the same instance, until its stream ends: what an already-used process
   answers in.
3. cold: today's first reply without a snapshot: `python app/main.py` with
   PORT set, from process start (spawn) until the end of its first reply's
   stream, polling GET /ping every millisecond, as bench/first_reply.py
   does it.
4. budget: `python app/main.py`, from process start until POST /warmup has
   answered 200 (after the first healthy /ping): the import plus warm-up
   that V2 must finish within 120 s.

Target: restored within 1.2 times warm. Rounds alternate the order of the
sides; medians over all rounds; every wait is bounded and every process
started here is killed at the end.

    uv run python bench/restore.py [rounds] [--smoke]   # default 9; 1 with --smoke
"""

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from _project import (
    Server,
    arguments,
    free_port,
    median,
    rendered_project,
    running,
    stop,
    uv_env,
    wait_until_healthy,
)

TIMEOUT = 60.0  # seconds: the bound on every wait
BUDGET = 120.0  # seconds: V2's limit on initialisation and the warm-up hook
TURN = {"messages": [{"role": "user", "content": [{"text": "<@U0123456>: hello"}]}]}

_sessions = iter(range(1, 1_000_000))
_children: list[int] = []  # forked instances, killed at the end
_servers: list[subprocess.Popen] = []  # processes started here, stopped at the end


def session() -> str:
    """A new Slack thread's session id for every request."""
    return f"slack_T1_C1_1700000000.{next(_sessions):06d}"


def agent_env(state: str, **extra: str) -> dict[str, str]:
    """Rehearsal, its stored runs and their key in `state`, never in this machine's home."""
    return {
        **uv_env(),
        "MODEL_PROVIDER": "rehearsal",
        "SESSION_STORAGE_DIR": str(Path(state) / "sessions"),
        "RUN_KEY_FILE": str(Path(state) / "run.key"),
        **extra,
    }


def reply_to_end(client: httpx.Client) -> int:
    """POST one Welt turn and read its stream to the end; the number of events."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "text/event-stream",
        "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session(),
    }
    with client.stream(
        "POST", "/invocations", content=json.dumps(TURN), headers=headers
    ) as response:
        response.raise_for_status()
        events = [
            json.loads(line[6:]) for line in response.iter_lines() if line.startswith("data: ")
        ]
    # Rehearsal's first turn: its notice, then a question (an interrupt) that ends the stream.
    assert events and any("interrupt" in event for event in events), (
        f"unexpected reply: {events[-3:]}"
    )
    return len(events)


def start_main(project: Path, state: str) -> tuple[Server, int, float]:
    """`python app/main.py` on a free port: the process, its port and the clock's start."""
    port = free_port()
    command = [str(project / ".venv" / "bin" / "python"), str(project / "app" / "main.py")]
    start = time.perf_counter()
    server = Server(command, cwd=state, env=agent_env(state, PORT=str(port)))
    _servers.append(server)
    return server, port, start


def cold(project: Path, state: str) -> float:
    """Seconds from spawning main.py to the end of its first reply's stream."""
    server, port, start = start_main(project, state)
    with running(server):
        wait_until_healthy(port, server, TIMEOUT)
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT) as client:
            reply_to_end(client)
        return time.perf_counter() - start


def budget(project: Path, state: str) -> tuple[float, float]:
    """Seconds from spawning main.py to a healthy /ping, and to POST /warmup answered 200."""
    server, port, start = start_main(project, state)
    with running(server):
        wait_until_healthy(port, server, TIMEOUT)
        ping = time.perf_counter() - start
        answer = httpx.post(f"http://127.0.0.1:{port}/warmup", timeout=BUDGET)
        warmed = time.perf_counter() - start
        assert answer.status_code == 200 and answer.json().get("warm"), answer.text
        return ping, warmed


class Snapshot:
    """tests/restored_instances.py: one started, warmed agent that forks restored instances."""

    def __init__(self, project: Path, state: str):
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 (open while the process lives)
        start = time.perf_counter()
        self.process = subprocess.Popen(
            [str(project / ".venv" / "bin" / "python"), "tests/restored_instances.py"],
            cwd=project,
            env=agent_env(state, PYTHONPATH=str(project / "app")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
        )
        _servers.append(self.process)
        self.buffer = b""
        self.restore()  # answered once imports and the warm-up are done
        self.started = (
            time.perf_counter() - start
        )  # spawn to the first instance: import, warm-up, fork

    def _line(self) -> bytes:
        deadline = time.perf_counter() + BUDGET
        while b"\n" not in self.buffer:
            left = deadline - time.perf_counter()
            ready, _, _ = select.select([self.process.stdout], [], [], max(left, 0))
            chunk = os.read(self.process.stdout.fileno(), 4096) if ready else b""
            if not chunk:
                self.errors.seek(0)
                raise RuntimeError(
                    f"no restored instance came: {self.errors.read().decode()[-2000:]}"
                )
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def restore(self) -> tuple[int, int]:
        """A new restored instance: its pid and port (already listening)."""
        self.process.stdin.write(b"serve\n")
        self.process.stdin.flush()
        pid, port = map(int, self._line().split())
        _children.append(pid)
        return pid, port


def restored(snapshot: Snapshot) -> tuple[float, float]:
    """Seconds to the end of a restored instance's first reply, then of its second."""
    pid, port = snapshot.restore()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=TIMEOUT) as client:
            start = time.perf_counter()
            reply_to_end(client)
            first = time.perf_counter() - start
            start = time.perf_counter()
            reply_to_end(client)
            second = time.perf_counter() - start
        return first, second
    finally:
        kill(pid)


def kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(rounds: int) -> None:
    began = time.perf_counter()
    project = rendered_project()
    state = tempfile.mkdtemp(prefix="bench-restore-")
    atexit.register(shutil.rmtree, state, ignore_errors=True)
    try:
        snapshot = Snapshot(project, state)
        # Unmeasured: warm the file cache, check every side works.
        cold(project, state)
        budget(project, state)
        restored(snapshot)
        built = time.perf_counter() - began
        results: dict[str, list] = {"restored": [], "cold": [], "budget": []}
        sides = {
            "restored": lambda: restored(snapshot),
            "cold": lambda: cold(project, state),
            "budget": lambda: budget(project, state),
        }
        for number in range(rounds):
            order = list(sides) if number % 2 == 0 else list(reversed(sides))
            for side in order:
                results[side].append(sides[side]())

        first = median([r[0] for r in results["restored"]])
        warm = median([r[1] for r in results["restored"]])
        from_cold = median(results["cold"])
        ping = median([r[0] for r in results["budget"]])
        warmed = median([r[1] for r in results["budget"]])
        worst = max(r[1] for r in results["budget"])
        ratio = first / warm
        print(
            f"restore: medians of {rounds} rounds, sides interleaved (rehearsal mode, Welt turn to stream end)"
        )
        print(f"  (1) restored instance, first reply   {first * 1e3:8.1f} ms")
        print(f"  (2) same instance, second request    {warm * 1e3:8.1f} ms")
        print(f"  (3) cold: spawn to first reply end   {from_cold * 1e3:8.1f} ms")
        print(f"  (1)/(2) {ratio:.2f}; target <= 1.2: {'met' if ratio <= 1.2 else 'NOT met'}")
        print(f"  (3)/(2) {from_cold / warm:.1f}   (3)/(1) {from_cold / first:.1f}")
        print(
            f"  (4) spawn to /ping {ping:.3f}s, to /warmup answered {warmed:.3f}s (worst {worst:.3f}s)"
            f" against {BUDGET:.0f}s: {warmed / BUDGET:.1%} of the budget"
        )
        print(
            f"  snapshot process: spawn to first restored instance {snapshot.started:.3f}s (once)"
        )
        print(f"setup {built:.0f}s, measured rounds {time.perf_counter() - began - built:.0f}s")
    finally:
        for pid in _children:
            kill(pid)
        for server in _servers:
            stop(server)


if __name__ == "__main__":
    main(arguments(__doc__, {"rounds": (9, 1)}).rounds)
