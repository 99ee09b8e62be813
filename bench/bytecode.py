"""A new session's first reply with shipped bytecode against one that compiles at start.

Every new AgentCore session is a fresh microVM with a fresh copy of the
deployed files, so bytecode written by an earlier session never helps the
next one: a session runs with what was shipped or compiles everything it
imports again. This bench shows what shipping bytecode saves per session.

One rendered default project gives both sides, on the project's interpreter
and the same locked packages:
- with bytecode: `uv sync --no-default-groups --compile-bytecode`, then
  `python -m compileall -q --invalidation-mode unchecked-hash app`, as the
  Dockerfile builds the image.
- without: a copy of that project (environment included) with every
  __pycache__ left out, as the AgentCore CLI's CodeZip leaves __pycache__
  out of the zip it deploys.
Both run with PYTHONDONTWRITEBYTECODE=1, as the image does, so the side
without bytecode compiles every module on every start, as each fresh microVM
would; the bench checks that it never gains a __pycache__.

Each run starts `MODEL_PROVIDER=rehearsal python app/main.py` (a scripted
model: no credentials, no network) in a fresh, empty working folder that
holds its SESSION_STORAGE_DIR and run key, polls GET /ping every millisecond, sends the first
POST /invocations ({"prompt": "hi"}) the moment /ping answers and stops the
clock when that reply's stream has ended. Beside it, `python -c "import
main"` (in app/) times the imports and startup checks alone. Runs alternate
with and without, after one unmeasured warm-up run of each; medians.

The interpreter's standard library is the same on both sides (this machine's
own, with its bytecode), and files are in the page cache for both, so the
difference is compiling the project's packages and code, nothing else.

    uv run python bench/bytecode.py [runs] [--smoke]   # default 7; 1 with --smoke
"""

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx
from _project import (
    UV,
    Server,
    arguments,
    free_port,
    median,
    project_python,
    python_for,
    rendered_template,
    running,
    uv_env,
    wait_until_healthy,
)

FIRST = {"prompt": "hi"}
HEADERS = {
    "Accept": "text/event-stream",
    "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": "bytecode-bench-session-0000000000000001",
}


def build_sides() -> dict[str, Path]:
    """The project compiled as the Dockerfile compiles it, and a copy without bytecode."""
    compiled = rendered_template()
    env = uv_env(python_for(project_python(compiled)))
    subprocess.run(
        [UV, "sync", "-q", "--no-default-groups", "--compile-bytecode"],
        cwd=compiled,
        env=env,
        check=True,
    )
    python = compiled / ".venv" / "bin" / "python"
    compile_app = [python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", "app"]
    subprocess.run(compile_app, cwd=compiled, env=env, check=True)
    bare = compiled.parent / "agent-without-bytecode"  # removed with the rendered project
    shutil.copytree(
        compiled, bare, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    return {"with": compiled, "without": bare}


def bytecode_files(project: Path) -> int:
    return sum(1 for _ in project.rglob("*.pyc"))


def run_env(state: str, **extra: str) -> dict[str, str]:
    """This environment for the agent: never writing bytecode, never reading it elsewhere.

    Its stored runs and their key go to `state`, a new folder for each run.
    """
    env = {key: value for key, value in uv_env().items() if key != "PYTHONPYCACHEPREFIX"}
    env.update(
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
        MODEL_PROVIDER="rehearsal",
        SESSION_STORAGE_DIR=str(Path(state) / "sessions"),
        RUN_KEY_FILE=str(Path(state) / "run.key"),
        **extra,
    )
    return env


def first_reply(project: Path) -> float:
    """Seconds from spawning the server to the end of its first reply's stream."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="session-") as state:
        env = run_env(state, PORT=str(port))
        command = [str(project / ".venv" / "bin" / "python"), str(project / "app" / "main.py")]
        start = time.perf_counter()
        server = Server(command, cwd=state, env=env)
        with running(server):
            wait_until_healthy(port, server)
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
                with client.stream("POST", "/invocations", json=FIRST, headers=HEADERS) as response:
                    response.raise_for_status()
                    events = sum(line.startswith("data: ") for line in response.iter_lines())
                elapsed = time.perf_counter() - start
            assert events, "the first reply carried no data event"
            return elapsed


def import_main(project: Path) -> float:
    """Seconds for `python -c "import main"` in app/, spawn to exit."""
    command = [str(project / ".venv" / "bin" / "python"), "-c", "import main"]
    with tempfile.TemporaryDirectory(prefix="session-") as state:
        env = run_env(state)
        start = time.perf_counter()
        done = subprocess.run(
            command, cwd=project / "app", env=env, capture_output=True, text=True, check=False
        )
        elapsed = time.perf_counter() - start
    if done.returncode:
        raise RuntimeError(f"import main failed in {project}:\n{done.stderr}")
    return elapsed


def main(runs: int) -> None:
    began = time.perf_counter()
    sides = build_sides()
    for side in sides.values():  # warm the file cache; check both serve
        first_reply(side)
        import_main(side)
    built = time.perf_counter() - began
    replies: dict[str, list[float]] = {name: [] for name in sides}
    imports: dict[str, list[float]] = {name: [] for name in sides}
    for run in range(runs):
        order = list(sides) if run % 2 == 0 else list(reversed(sides))
        for name in order:
            replies[name].append(first_reply(sides[name]))
        for name in order:
            imports[name].append(import_main(sides[name]))
    assert bytecode_files(sides["without"]) == 0, "the side without bytecode wrote some"

    print(f"bytecode: medians of {runs} runs each, alternating; with bytecode vs without")
    print(f"  .pyc files shipped             {bytecode_files(sides['with'])} vs 0")
    for label, results in (
        ("spawn to complete first reply", replies),
        ('python -c "import main"', imports),
    ):
        w, wo = median(results["with"]), median(results["without"])
        print(
            f"  {label:<30} {w:.3f}s vs {wo:.3f}s   ratio without/with {wo / w:.2f}  (+{wo - w:.2f}s)"
        )
    print(f"setup {built:.0f}s, measured runs {time.perf_counter() - began - built:.0f}s")


if __name__ == "__main__":
    main(arguments(__doc__, {"runs": (7, 1)}).runs)
