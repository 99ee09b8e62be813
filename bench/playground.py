"""`make playground` to the first reply rendered in the page, in rehearsal, in a real browser.

What a new user waits for: the one command, the agent it starts (no agent
answers on the port yet), the page, then the first message's reply drawn
as Welt draws it. Each run renders nothing anew: the default project is
rendered and synced once, bytecode compiled, and every run starts from no
process but a headless Chromium that is already open, as a person's browser
is. The clock starts when `make playground` starts and stops when the
reply's first words are on the page, with three marks in between: the URL
printed (the agent answered /ping), the page ready, the message sent.
Debian's chromium (or PLAYGROUND_BROWSER) drives the page, through the
project's own tests/cdp.py.

    uv run python bench/playground.py [runs] [--smoke]   # default 3; 1 with --smoke
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _project import UV, arguments, free_port, median, project_python, python_for, rendered_project, uv_env


def one_run(project: Path, browser) -> dict[str, float]:
    port = free_port()
    env = {
        **uv_env(python_for(project_python(project))),
        "PATH": os.pathsep.join([str(Path(UV).parent), os.environ.get("PATH", "")]),
        "PORT": str(port),
        "MCP_SERVERS": "off",
        "SESSION_STORAGE_DIR": tempfile.mkdtemp(prefix="bench-sessions-"),
        "RUN_KEY_FILE": os.path.join(tempfile.mkdtemp(prefix="bench-seal-"), "run.key"),
    }
    env.pop("MODEL_PROVIDER", None)
    started = time.perf_counter()
    make = subprocess.Popen(
        ["make", "playground", "ARGS=--no-browser --port 0"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # make, uv, the playground and its agent: one group to stop
    )
    try:
        assert make.stdout is not None
        url = next(
            line.removeprefix("Playground: ").strip()
            for line in make.stdout
            if line.startswith("Playground: ")
        )
        served = time.perf_counter()
        page = browser.page()
        page.goto(url)
        page.wait_for("document.body.dataset.ready === 'true'")
        ready = time.perf_counter()
        page.type("#message", "hi")
        page.press("Enter")
        sent = time.perf_counter()
        page.wait_for("document.querySelector('.agent-message .text')?.textContent.trim()", 60)
        replied = time.perf_counter()
        page.close()
    finally:
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=60)
    return {
        "make playground to URL (agent started)": served - started,
        "to page ready": ready - started,
        "to message sent": sent - started,
        "to first reply rendered": replied - started,
        "message to first reply": replied - sent,
    }


def main() -> None:
    runs = arguments(__doc__, {"runs": (3, 1)}).runs
    project = rendered_project()
    sys.path.insert(0, str(project / "tests"))
    from cdp import Browser, find_browser  # the project's own client, standard library only

    executable = find_browser()
    if executable is None:
        raise SystemExit("no Chromium or Chrome here (Debian: apt-get install chromium)")
    browser = Browser(executable)
    try:
        results = [one_run(project, browser) for _ in range(runs)]
    finally:
        browser.close()
    for figure in results[0]:
        values = [result[figure] for result in results]
        shown = ", ".join(f"{value:.2f}" for value in values)
        print(f"{figure:<40} median {median(values):.2f}s   ({shown})")


if __name__ == "__main__":
    main()
