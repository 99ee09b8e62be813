"""Shared by the benchmarks: a rendered default project with its environment.

The default project pins its Python in .python-version (3.13; 3.12 at the
least), so uv builds its environment with a matching interpreter from this
machine, never with the Python running the benchmark.

Every script takes --smoke: one short round at tiny sizes, so that
tests/test_bench.py can run them all and a script that no longer fits the
package fails a test instead of the next person who measures. Its figures
are not worth quoting. BENCH_PROJECT names a default project already built
(as `rendered_project` builds one), so that those runs share one environment.
"""

import argparse
import atexit
import contextlib
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
    candidates += sorted(
        glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}"))
    )
    for candidate in filter(None, candidates):
        if (
            subprocess.run([candidate, "-c", "pass"], capture_output=True, check=False).returncode
            == 0
        ):
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

    BENCH_PROJECT, when set, is that project already built, and the
    default answers take it instead of building another.
    """
    shared = shared_project()
    if shared and not answers:
        return shared
    return built(rendered_template(**answers))


def measure_in_project(script: str, *arguments: str, folder: str | None = None) -> None:
    """Run `script --measure ARGUMENTS... STATE` on the default project's interpreter.

    For the benches that time the app inside one process: they import the
    package, so they run where it is installed, from the project's root,
    with a run store and a seal key of their own in STATE, a temporary
    folder (in `folder` when given) removed afterwards.
    """
    project = rendered_project()
    prefix = f"bench-{Path(script).stem.replace('_', '-')}-"
    with tempfile.TemporaryDirectory(prefix=prefix, dir=folder) as state:
        env = {
            **os.environ,
            "PYTHONPATH": str(project / "app"),
            "SESSION_STORAGE_DIR": str(Path(state) / "sessions"),
            "RUN_KEY_FILE": str(Path(state) / "run.key"),
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        env.pop("VIRTUAL_ENV", None)
        python = str(project / ".venv" / "bin" / "python")
        measuring = [python, script, "--measure", *arguments, state]
        subprocess.run(measuring, cwd=project, env=env, check=True)


def shared_project() -> Path | None:
    """The default project BENCH_PROJECT names, already built, or None."""
    shared = os.environ.get("BENCH_PROJECT")
    return Path(shared) if shared else None


def built(root: Path) -> Path:
    """A rendered project with its environment synced and its bytecode compiled.

    Bytecode is compiled up front, so a timed run measures imports and
    requests, not the first run writing .pyc files.
    """
    env = uv_env(python_for(project_python(root)))
    subprocess.run([UV, "sync", "-q"], cwd=root, env=env, check=True)
    python = str(root / ".venv" / "bin" / "python")
    compiling = [python, "-m", "compileall", "-q", "-j", "0", str(root)]
    subprocess.run(compiling, cwd=root, check=False, stdout=subprocess.DEVNULL)
    return root


def arguments(doc: str, counts: dict[str, tuple[int, int]], more=None) -> argparse.Namespace:
    """The command line: `counts` maps each optional count to its default and its smoke value.

    A count given on the command line wins, --smoke or not; `more(parser)`
    adds a script's own options.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    for name, (default, smoke) in counts.items():
        parser.add_argument(
            name, type=int, nargs="?", help=f"default {default}, {smoke} with --smoke"
        )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="one short round at tiny sizes, to check the script runs",
    )
    if more:
        more(parser)
    given = parser.parse_args()
    for name, (default, smoke) in counts.items():
        if getattr(given, name) is None:
            setattr(given, name, smoke if given.smoke else default)
    return given


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


@contextlib.contextmanager
def running(*servers: "Server"):
    """Stops the servers at the end; a failure meanwhile carries the end of their output.

    A request that fails because its server crashed would otherwise show
    only the client's side: a closed connection, an error event.
    """
    try:
        yield
    except Exception as failure:
        if not isinstance(failure, ServerDied):
            for server in servers:
                failure.add_note(f"the end of {server.args!r:.100}'s output:\n{server.tail()}")
        raise
    finally:
        for server in servers:
            stop(server)


class Server(subprocess.Popen):
    """A process a benchmark starts, its output kept in a file: when it dies, the bench says why.

    Its standard error always, its standard output unless `quiet_stdout`
    (a console exporter's spans, say, which nobody reads) or a `stdout`
    given (a pipe the bench reads a helper's answer from).
    """

    def __init__(self, command: list[str], *, quiet_stdout: bool = False, **options) -> None:
        self.output = tempfile.TemporaryFile()  # noqa: SIM115 (open while the process lives)
        stdout = options.pop("stdout", subprocess.DEVNULL if quiet_stdout else self.output)
        super().__init__(command, stdout=stdout, stderr=self.output, **options)

    def tail(self, size: int = 4000) -> str:
        """The end of what the process wrote, read without moving the file offset it shares."""
        end = os.fstat(self.output.fileno()).st_size
        text = os.pread(self.output.fileno(), size, max(0, end - size)).decode(errors="replace")
        return text.strip() or "(it wrote nothing)"

    def died(self, waiting_for: str) -> "ServerDied":
        return ServerDied(
            f"the server {self.args!r:.100} exited with code {self.returncode} before {waiting_for}; "
            f"the end of its output:\n{self.tail()}"
        )


class ServerDied(RuntimeError):
    """A benchmark's server exited early; the message ends with what it wrote."""


def serve(project: Path, script: str, port: int, **extra_env: str) -> Server:
    """Run a script with the project's interpreter in app/ (its code folder), serving on a port.

    Stored runs and their key go to a temporary folder, never to this
    machine's home.
    """
    state = tempfile.mkdtemp(prefix="bench-state-")
    atexit.register(shutil.rmtree, state, ignore_errors=True)
    env = {
        **uv_env(),
        "PORT": str(port),
        "SESSION_STORAGE_DIR": str(Path(state) / "sessions"),
        "RUN_KEY_FILE": str(Path(state) / "run.key"),
        **extra_env,
    }
    python = str(project / ".venv" / "bin" / "python")
    return Server([python, "-c", script], cwd=project / "app", env=env)


def wait_until_healthy(port: int, server: Server, timeout: float = 60.0) -> float:
    """Seconds until GET /ping answers; polls every millisecond, and fails at once if the server dies."""
    start = time.perf_counter()
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=1) as client:
        return seconds_to_ping(client, server, start, timeout)


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


# The two servers the first-reply and throughput benches compare, each run as
# `python -c` in app/: add them to a model's source that defines `Echo`, a
# ScriptedModel subclass. The generated one is main.py's app, built by the
# package's factory as main.py builds it, with one Echo as the shared model.
GENERATED_SERVER = """
from my_welt_agent.factory import create_app, serve
from my_welt_agent.platform.logs import log_json_lines
from my_welt_agent.settings import Settings

log_json_lines()
ECHO = Echo()
serve(create_app(Settings.from_environment(), new_model=lambda: ECHO))
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
        print(
            f"round {round_number + 1}: first reply {names[0]} {a:.3f}s, {names[1]} {b:.3f}s, ratio {a / b:.2f}"
        )
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
    print(
        f"  {'/ping to first reply':<27} {a * 1e3:.0f} ms vs {b * 1e3:.0f} ms   {(a - b) * 1e3:+.0f} ms"
    )
    return medians


def seconds_to_ping(
    client: httpx.Client, server: Server, start: float, timeout: float = 60.0
) -> float:
    """Seconds from `start` (perf_counter) until the server's GET /ping answers 200; polls every ms.

    A server that exits fails the wait at once, with the end of its output,
    rather than after the timeout with nothing to go on.
    """
    while True:
        try:
            if client.get("/ping").status_code == 200:
                return time.perf_counter() - start
        except httpx.TransportError:
            time.sleep(0.001)
        if server.poll() is not None:
            raise server.died("answering /ping")
        if time.perf_counter() - start > timeout:
            raise TimeoutError(
                f"the server {server.args!r:.100} did not answer /ping within {timeout:.0f} s; "
                f"the end of its output:\n{server.tail()}"
            )
