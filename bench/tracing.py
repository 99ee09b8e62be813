"""What `opentelemetry-instrument` costs a new thread: first reply and memory, traced or not.

AgentCore starts a CodeZip agent as `opentelemetry-instrument python main.py`
(the image's CMD is the same), so every new Slack thread, a new microVM,
pays for aws-opentelemetry-distro before main.py runs its first line: the
launcher, the configurator and every instrumentation it finds installed.
This bench starts the generated app both ways, from app/, and compares:
- traced: `opentelemetry-instrument python main.py`, the deploy's command;
- plain: `python main.py`.

Both sides run in the environment a deploy installs (`uv sync --frozen
--no-default-groups` into a folder of the bench's own: dev tools such as Flask would
add instrumentations that AgentCore never loads), with the OpenTelemetry
variables the deployment gives the runtime (deploy/runtime.py's TELEMETRY,
which the image's ENV repeats), MODEL_PROVIDER=rehearsal (the real tools, gate and wire; the first
turn streams text, then asks a question), no network and no exporter that
sends: spans go to the console exporter, whose stdout is discarded, and
metrics and logs exporters are off. Bytecode is compiled first.

Each run polls GET /ping every millisecond, posts the first turn the moment
it answers, stops the clock at the first `data` event and reads the
server's CPU seconds then (/proc, Linux); once the stream has ended it reads
VmRSS. Runs alternate, and so does the side that goes first, in rounds;
figures are medians over all runs. One more run per side, untimed, counts
the modules in sys.modules when the server exits after its first reply.
Targets (issue 18): first reply within 1.3 times plain, RSS within +20 MiB.

With --agent-observability both sides also get AGENT_OBSERVABILITY_ENABLED=true,
the distro's mode for AgentCore Observability (no resource detectors, log
records through OpenTelemetry); the exporters stay as above.

    uv run python bench/tracing.py [rounds] [runs per round]   # default 3 5
    uv run python bench/tracing.py 3 5 --project PATH   # an already rendered project
    uv run python bench/tracing.py --agent-observability
    uv run python bench/tracing.py --smoke   # 1 round of 1 run
"""

import argparse
import atexit
import json
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import NamedTuple

import httpx
from _project import (
    UV,
    Server,
    arguments,
    free_port,
    interleaved,
    print_start_figures,
    project_python,
    python_for,
    rendered_template,
    running,
    seconds_to_ping,
    shared_project,
    uv_env,
)

FIRST = [{"role": "user", "content": [{"text": "<@U1>: hello"}]}]
# No sending exporter: what a deploy would send goes to a discarded stdout.
EXPORTERS = {
    "OTEL_TRACES_EXPORTER": "console",
    "OTEL_METRICS_EXPORTER": "none",
    "OTEL_LOGS_EXPORTER": "none",
    "AWS_EC2_METADATA_DISABLED": "true",
}
# main.py run as a script, as both commands run it, writing len(sys.modules)
# when the process exits (after its first reply, once the bench stops it).
# uvicorn re-raises the SIGTERM it caught once it has shut down, and the
# default action would end the process before atexit runs: exit instead.
COUNTING = """
import atexit, os, runpy, signal, sys
atexit.register(lambda: open(os.environ["MODULES_FILE"], "w").write(str(len(sys.modules))))
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
runpy.run_path("main.py", run_name="__main__")
"""


class Run(NamedTuple):
    ping: float  # process start to a healthy /ping
    reply: float  # process start to the first data event
    cpu: float  # the server's CPU seconds at that moment
    rss: float  # MiB resident once the first reply has been read to its end


def runtime_environment(project: Path, into: Path) -> Path:
    """The deploy's packages (uv.lock, no dev group) in a folder of its own; its bin folder.

    Kept apart from the project's .venv, which holds the dev group too.
    """
    env = uv_env(python_for(project_python(project)))
    env["UV_PROJECT_ENVIRONMENT"] = str(into)
    if not (project / "uv.lock").exists():
        subprocess.run([UV, "lock", "-q"], cwd=project, env=env, check=True)
    subprocess.run(
        [UV, "sync", "-q", "--frozen", "--no-default-groups"], cwd=project, env=env, check=True
    )
    python = into / "bin" / "python"
    for folder in (into, project / "app"):
        subprocess.run(
            [str(python), "-m", "compileall", "-q", "-j", "0", str(folder)],
            check=False,
            stdout=subprocess.DEVNULL,
        )
    return into / "bin"


# Run in the project's root with the runtime's Python: deploy/runtime.py
# imports nothing but the standard library and deploy/ itself.
READ_TELEMETRY = "import json; from deploy.runtime import TELEMETRY; print(json.dumps(TELEMETRY))"


def deployed_env(project: Path, bin_folder: Path, state: Path) -> dict[str, str]:
    """This machine's environment without its OpenTelemetry settings, plus the deployment's.

    Only the deployment's telemetry variables: the rest name a model, a
    mount and a secret that exist only on AgentCore.
    """
    env = {
        key: value
        for key, value in uv_env().items()
        if not key.startswith(("OTEL_", "AGENT_OBSERVABILITY"))
    }
    read = subprocess.run(
        [str(bin_folder / "python"), "-c", READ_TELEMETRY],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    if read.returncode:
        raise SystemExit(f"could not read deploy/runtime.py's TELEMETRY:\n{read.stderr}")
    env.update(json.loads(read.stdout))
    env.update(
        EXPORTERS,
        MODEL_PROVIDER="rehearsal",
        RUN_STORE="session-storage",
        SESSION_STORAGE_DIR=str(state / "sessions"),
        RUN_KEY_FILE=str(state / "run.key"),
    )
    return env


def command(bin_folder: Path, traced: bool, script: list[str]) -> list[str]:
    python = [str(bin_folder / "python"), *script]
    return [str(bin_folder / "opentelemetry-instrument"), *python] if traced else python


def cpu_seconds(pid: int) -> float:
    """CPU seconds a process has used so far, all threads (Linux /proc, 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def first_reply(client: httpx.Client, start: float, pid: int) -> tuple[float, float]:
    """Seconds from start to the first {"data": ...} event, and the server's CPU then.

    The stream is read to its end, so the memory read afterwards is the
    process's after a whole first turn.
    """
    headers = {
        "Accept": "text/event-stream",
        "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": f"slack_T1_C1_{uuid.uuid4().hex}",
    }
    first = None
    with client.stream(
        "POST", "/invocations", json={"messages": FIRST}, headers=headers
    ) as response:
        for line in response.iter_lines():
            if first is None and line.startswith("data: ") and '"data"' in line:
                first = time.perf_counter() - start, cpu_seconds(pid)
    assert first is not None, "the stream carried no data event"
    return first


def one_run(
    project: Path, bin_folder: Path, traced: bool, deployed: dict, script=("main.py",), **extra
) -> Run:
    port = free_port()
    env = {**deployed, "PORT": str(port), **extra}
    start = time.perf_counter()
    # Spans go to the console exporter's stdout, which nobody reads.
    server = Server(
        command(bin_folder, traced, list(script)), cwd=project / "app", env=env, quiet_stdout=True
    )
    with running(server), httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        ping = seconds_to_ping(client, server, start)
        reply, cpu = first_reply(client, start, server.pid)
        return Run(ping, reply, cpu, resident_mib(server.pid))


def modules_after_a_reply(
    project: Path, bin_folder: Path, traced: bool, deployed: dict, **extra: str
) -> int:
    with tempfile.NamedTemporaryFile("r", suffix=".count") as count:
        one_run(
            project,
            bin_folder,
            traced,
            deployed,
            script=("-c", COUNTING),
            MODULES_FILE=count.name,
            **extra,
        )
        return int(count.read() or 0)


def main(rounds: int, runs: int, project: Path | None, extra_env: dict[str, str]) -> None:
    project = project or shared_project() or rendered_template()
    work = Path(tempfile.mkdtemp(prefix="bench-tracing-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    bin_folder = runtime_environment(project, work / "runtime-venv")
    deployed = deployed_env(project, bin_folder, work)
    sides = {"traced": True, "plain": False}
    # Warm the file cache and count modules, one untimed run per side.
    modules = {
        side: modules_after_a_reply(project, bin_folder, traced, deployed, **extra_env)
        for side, traced in sides.items()
    }
    results = interleaved(
        sides,
        rounds,
        runs,
        lambda traced: one_run(project, bin_folder, traced, deployed, **extra_env),
    )
    medians = print_start_figures(results)
    rss = medians(lambda r: r.rss)
    print(
        f"  {'RSS after the first reply':<27} {rss[0]:.1f} MiB vs {rss[1]:.1f} MiB   +{rss[0] - rss[1]:.1f} MiB"
    )
    print(
        f"  {'modules after a reply':<27} {modules['traced']} vs {modules['plain']}   "
        f"+{modules['traced'] - modules['plain']} (one run each)"
    )

    wall, cpu = medians(lambda r: r.reply), medians(lambda r: r.cpu)
    ratios = wall[0] / wall[1], cpu[0] / cpu[1]
    extra = rss[0] - rss[1]
    verdict = "met" if max(ratios) <= 1.3 and extra <= 20 else "NOT met"
    print(
        f"tracing costs: first reply x{ratios[0]:.2f} wall, x{ratios[1]:.2f} CPU, +{extra:.1f} MiB; "
        f"targets <= 1.3 and <= +20 MiB: {verdict}"
    )


if __name__ == "__main__":

    def options(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--project", type=Path, help="a rendered project to measure instead of a new one"
        )
        parser.add_argument(
            "--agent-observability", action="store_true", help="AGENT_OBSERVABILITY_ENABLED=true"
        )

    given = arguments(__doc__, {"rounds": (3, 1), "runs": (5, 1)}, options)
    extra_env = {"AGENT_OBSERVABILITY_ENABLED": "true"} if given.agent_observability else {}
    project = given.project.resolve() if given.project else None
    main(given.rounds, given.runs, project, extra_env)
