"""Shared by the benchmarks: a rendered default project with its environment.

The default project pins its Python in .python-version (3.13; 3.12 at the
least), so uv builds its environment with a matching interpreter from this
machine, never with the Python running the benchmark.
"""

import atexit
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import httpx
from uv import find_uv_bin

TEMPLATE = Path(__file__).resolve().parent.parent

# uv by its real path: a version manager's `uv` shim can fail inside a folder
# with a .python-version file.
UV = find_uv_bin()


def project_python(project: Path) -> str:
    """The Python version the project pins, such as "3.13"."""
    return (project / ".python-version").read_text().strip()


def python_for(version: str) -> str:
    """The path of an installed interpreter for a version; fails naming the version."""
    if version == f"{sys.version_info.major}.{sys.version_info.minor}":
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    candidates += sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True).returncode == 0:
            return candidate
    raise SystemExit(f"the default project needs Python {version}, which is not installed here")


def uv_env(python: str | None = None) -> dict[str, str]:
    """This environment, offline-safe, with uv pinned to an interpreter when one is given."""
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env.update(AWS_EC2_METADATA_DISABLED="true", UV_PYTHON_DOWNLOADS="never")
    if python:
        env["UV_PYTHON"] = python
    return env


def rendered_template(**answers) -> Path:
    """The default project (or other answers) rendered in a temporary folder, not yet synced; removed at exit."""
    from copier import run_copy
    from copier.errors import DirtyLocalWarning

    # The benchmarks render HEAD plus local changes on purpose.
    warnings.simplefilter("ignore", DirtyLocalWarning)
    root = Path(tempfile.mkdtemp(prefix="bench-")) / "agent"
    atexit.register(shutil.rmtree, root.parent, ignore_errors=True)
    run_copy(str(TEMPLATE), root, data=answers, defaults=True, vcs_ref="HEAD", quiet=True)
    return root


def rendered_project(**answers) -> Path:
    """The default project in a temporary folder, synced and compiled; removed at exit.

    Bytecode is compiled up front, so a timed run measures imports and
    requests, not the first run writing .pyc files.
    """
    root = rendered_template(**answers)
    env = uv_env(python_for(project_python(root)))
    subprocess.run([UV, "sync", "-q"], cwd=root, env=env, check=True)
    python = str(root / ".venv" / "bin" / "python")
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", str(root)], cwd=root, check=False)
    return root


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(process: subprocess.Popen) -> None:
    """Terminate a server, and kill it if it does not go within ten seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve(project: Path, script: str, port: int, **extra_env: str) -> subprocess.Popen:
    """Run a script with the project's interpreter in app/ (its code folder), serving on a port."""
    env = {**uv_env(), "PORT": str(port), **extra_env}
    return subprocess.Popen(
        [str(project / ".venv" / "bin" / "python"), "-c", script],
        cwd=project / "app",
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_until_healthy(port: int, timeout: float = 60.0) -> float:
    """Seconds until GET /ping answers; polls every millisecond."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ping", timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.TransportError:
            time.sleep(0.001)
    raise TimeoutError(f"nothing answered /ping on port {port}")


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# The two servers the first-reply and throughput benches compare, each run as
# `python -c` in app/: add them to a model's source that defines `Echo`, a
# ScriptedModel subclass.
GENERATED_SERVER = """
import runpy

from my_welt_agent import model

model.build_model = lambda env=None: Echo()
runpy.run_path("main.py", run_name="__main__")
"""

FLOOR_SERVER = """
import os

from bedrock_agentcore.runtime import BedrockAgentCoreApp
from strands import Agent

app = BedrockAgentCoreApp()


@app.entrypoint
async def invoke(payload):
    agent = Agent(model=Echo(), callback_handler=None)
    async for event in agent.stream_async(payload["messages"]):
        if "data" in event:
            yield {"data": event["data"]}


app.run(port=int(os.environ["PORT"]))
"""


def interleaved(sides: dict, rounds: int, runs: int, measure) -> dict[str, list]:
    """`measure(side's value)` for each side in turn, the side that goes first alternating.

    Both sides then see the same machine state. Each result has a `.reply`
    (seconds to the first reply); after each round its medians and their
    ratio, first side over second, are printed.
    """
    names = list(sides)
    results: dict[str, list] = {name: [] for name in names}
    for round_number in range(rounds):
        for run in range(runs):
            for name in names if run % 2 == 0 else reversed(names):
                results[name].append(measure(sides[name]))
        a, b = (median([r.reply for r in results[name][-runs:]]) for name in names)
        print(f"round {round_number + 1}: first reply {names[0]} {a:.3f}s, {names[1]} {b:.3f}s, ratio {a / b:.2f}")
    return results


def print_start_figures(results: dict[str, list]):
    """Print the start-up medians of two sides (first over second); return their `medians`."""
    names = list(results)

    def medians(figure) -> tuple[float, float]:
        return tuple(median([figure(r) for r in results[name]]) for name in names)

    count = len(results[names[0]])
    print(f"medians of {count} runs each, {names[0]} vs {names[1]}:")
    for label, figure in (
        ("start to /ping", lambda r: r.ping),
        ("start to first reply", lambda r: r.reply),
        ("server CPU to first reply", lambda r: r.cpu),
    ):
        a, b = medians(figure)
        print(f"  {label:<27} {a:.3f}s vs {b:.3f}s   ratio {a / b:.2f}")
    a, b = medians(lambda r: r.reply - r.ping)
    print(f"  {'/ping to first reply':<27} {a * 1e3:.0f} ms vs {b * 1e3:.0f} ms   {(a - b) * 1e3:+.0f} ms")
    return medians


def seconds_to_ping(client: httpx.Client, server: subprocess.Popen, start: float) -> float:
    """Seconds from `start` (perf_counter) until the server's GET /ping answers 200; polls every ms."""
    while True:
        try:
            if client.get("/ping").status_code == 200:
                return time.perf_counter() - start
        except httpx.TransportError:
            time.sleep(0.001)
        if server.poll() is not None or time.perf_counter() - start > 60:
            raise RuntimeError(f"the server {server.args!r:.80} never answered /ping")
