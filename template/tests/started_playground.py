"""`make playground` as a process of the tests: its command, with no browser of its own."""

import os
import subprocess
import sys
import tempfile

from conftest import PROJECT


def playground_process(
    agent_port: int, said: list[str] | None = None
) -> tuple[subprocess.Popen[str], str]:
    """The playground, for an agent on this port; returns once it serves, with its URL.

    With no agent answering there, it starts one in rehearsal, on a store
    and a consent key of its own, as `make playground` would. said gets
    the lines it printed before it served.
    """
    env = {
        **os.environ,
        "AWS_EC2_METADATA_DISABLED": "true",
        "PORT": str(agent_port),
        "MCP_SERVERS": "off",  # never the servers you listed
        "RUN_STORE": "session-storage",
        "SESSION_STORAGE_DIR": tempfile.mkdtemp(prefix="sessions-"),
        "RUN_KEY_FILE": os.path.join(tempfile.mkdtemp(prefix="seal-"), "run.key"),
        "CONSENT_KEY_FILE": os.path.join(tempfile.mkdtemp(prefix="consent-"), "consent.key"),
    }
    env.pop("APPROVERS", None)
    env.pop("MODEL_PROVIDER", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "playground", "--no-browser", "--port", "0"],
        cwd=PROJECT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if said is not None:
            said.append(line)
        if line.startswith("Playground: "):
            return process, line.removeprefix("Playground: ").strip()
    raise AssertionError(f"the playground exited ({process.wait()}) without serving")
