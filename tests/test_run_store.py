"""run_store: where runs waiting for a human's answer are kept.

What the deployment declares for each store (the bucket, its grants, or the
session storage mount) is in test_deployment.py. Here, a bad answer is
refused, and, end to end, the generated app
runs as AgentCore runs it, on an S3 server on this machine (moto): a
question asked by a process that is killed is answered by the next one.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from conftest import render, run

PROJECT = "billing-bot"


def deployed_variables(root: Path) -> dict[str, str]:
    """The environment variables the deployment gives prod's runtime (deploy/runtime.py)."""
    printed = run(
        [
            ".venv/bin/python", "-c",
            "import json; from deploy import runtime, settings; "
            "print(json.dumps(runtime.environment_variables(settings.load_environment('prod'))))",
        ],
        root,
    )  # fmt: skip
    assert printed.returncode == 0, printed.stderr
    return json.loads(printed.stdout)


BAD_ANSWERS = {
    "a store outside the choices": ({"run_store": "dynamodb"}, "run_store", "'s3'"),
    "a bucket with capitals and an underscore": (
        {"run_store": "s3", "state_bucket": "Bad_Bucket"},
        "state_bucket",
        "state_bucket must be an S3 bucket name",
    ),
    "a bucket name too short": (
        {"run_store": "s3", "state_bucket": "ab"},
        "state_bucket",
        "state_bucket must be an S3 bucket name",
    ),
    "a bucket named like an IP address": (
        {"run_store": "s3", "state_bucket": "1.2.3.4"},
        "state_bucket",
        "state_bucket must be an S3 bucket name",
    ),
}


@pytest.mark.parametrize("answers, question, message", BAD_ANSWERS.values(), ids=BAD_ANSWERS.keys())
def test_a_bad_run_store_answer_is_refused_naming_the_question(
    tmp_path, answers, question, message
):
    with pytest.raises(ValueError) as refused:
        render(tmp_path / "project", **answers)

    assert f"'{question}'" in str(refused.value)
    assert message in str(refused.value)
    assert not (tmp_path / "project" / "app" / "main.py").exists()


# ---------------------------------------------------------------- end to end
#
# The generated app, started as AgentCore starts it (`python main.py` with
# agentcore.json's envVars), keeps its runs in a bucket of an S3 server on
# this machine, reached over HTTP by boto3 as the deployed agent reaches AWS.

# Any credentials do: the S3 server checks none.
S3_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "offline-test",
    "AWS_SECRET_ACCESS_KEY": "offline-test",
    "AWS_DEFAULT_REGION": "us-east-1",
}
RESUMED = "The run resumed in a new process"  # rehearsal's last words after a restart


@pytest.fixture(scope="module")
def s3_agent(built_project):
    """The minimal agent rendered with run_store=s3, its environment built."""
    return built_project("minimal-s3")


@pytest.fixture(scope="module")
def s3_server(aws_server):
    """The S3 API the agent keeps its runs in."""
    return aws_server


@pytest.fixture(scope="module")
def deployed_env(s3_agent, s3_server, tmp_path_factory) -> dict[str, str]:
    """The environment of the agent as AgentCore runs it, with its bucket and secret created.

    The deployment's variables as they are (RUN_STORE, STATE_BUCKET,
    STATE_PREFIX), the secret that seals stored runs as the stack makes
    one (RUN_KEY_SECRET), the AWS server's endpoint for both, and rehearsal
    instead of a model. Nothing of the shell's AWS settings.
    """
    variables = deployed_variables(s3_agent)
    s3_client(s3_server).create_bucket(Bucket=variables["STATE_BUCKET"])
    secret = client_of("secretsmanager", s3_server).create_secret(
        Name="RunKey", SecretString="k" * 64
    )
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path_factory.mktemp("home")),
        **variables,
        "RUN_KEY_SECRET": secret["ARN"],
        **S3_CREDENTIALS,
        "AWS_ENDPOINT_URL_S3": s3_server,
        "AWS_ENDPOINT_URL_SECRETS_MANAGER": s3_server,
        "AWS_EC2_METADATA_DISABLED": "true",
        "MODEL_PROVIDER": "rehearsal",
    }


def s3_client(endpoint: str):
    return client_of("s3", endpoint)


def client_of(service: str, endpoint: str):
    import boto3

    return boto3.client(
        service,
        endpoint_url=endpoint,
        region_name=S3_CREDENTIALS["AWS_DEFAULT_REGION"],
        aws_access_key_id=S3_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=S3_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )


class Agent:
    """One `python app/main.py` process of the generated project, on a free port."""

    def __init__(self, project: Path, env: dict[str, str], log: Path):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        with log.open("w") as output:
            self.process = subprocess.Popen(
                [project / ".venv" / "bin" / "python", "app/main.py"],
                cwd=project,
                env={**env, "PORT": str(port)},
                stdout=output,
                stderr=subprocess.STDOUT,
            )

    def wait_until_ready(self, within: float = 60) -> "Agent":
        """Poll GET /ping until it answers; fail with the log if the process ends first."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/ping", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            try:
                self.process.wait(timeout=0.1)  # the pause between polls
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"the agent exited with {self.process.returncode}:\n{self.output()}")
        pytest.fail(f"the agent did not answer /ping within {within} s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text()[-3000:]

    def send(self, session: str, payload: dict) -> list[dict]:
        """POST a Welt payload to /invocations; the SSE events of the reply."""
        return posted(self.url, session, payload)

    def say(self, session: str, text: str) -> list[dict]:
        return self.send(session, {"messages": [{"role": "user", "content": [{"text": text}]}]})

    def answer(
        self, session: str, interrupt_id: str, value: object, source: str = "input"
    ) -> list[dict]:
        responses = {interrupt_id: {"value": value, "source": source}}
        return self.send(session, {"interrupt_responses": responses})

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)


def posted(url: str, session: str, payload: dict) -> list[dict]:
    """POST a Welt payload to an agent's /invocations; the SSE events of the reply.

    A refused connection is tried again: the agent logs "Serving on" just before
    its server binds the port.
    """
    transport = httpx.HTTPTransport(retries=5)
    with httpx.Client(transport=transport, timeout=60) as client, client.stream(
        "POST",
        f"{url}/invocations",
        json=payload,
        headers={
            "Accept": "text/event-stream",
            "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id": session,
        },
    ) as response:
        assert response.status_code == 200, response.read()
        return [
            json.loads(line.removeprefix("data: "))
            for line in response.iter_lines()
            if line.startswith("data: ")
        ]


@pytest.fixture
def agents(s3_agent, deployed_env, tmp_path):
    """Start agent processes, each a new one on the same bucket and session storage.

    start(n) starts n at once and returns them once each answers /ping.
    """
    storage = tmp_path / "session-storage"
    storage.mkdir()
    started: list[Agent] = []

    def start(count: int = 1) -> list[Agent]:
        env = {**deployed_env, "SESSION_STORAGE_DIR": str(storage)}
        new = [
            Agent(s3_agent, env, tmp_path / f"agent-{len(started) + n}.log") for n in range(count)
        ]
        started.extend(new)
        return [agent.wait_until_ready() for agent in new]

    start.session_storage = storage
    yield start
    for agent in started:
        if agent.process.poll() is None:
            agent.kill()


def interrupts(events: list[dict]) -> list[dict]:
    return [event["interrupt"] for event in events if "interrupt" in event]


def stored_keys(s3_server: str, bucket: str) -> list[str]:
    listing = s3_client(s3_server).list_objects_v2(Bucket=bucket)
    return [item["Key"] for item in listing.get("Contents", [])]


def a_deploy(session_storage: Path) -> None:
    """What a deploy does to AgentCore's session storage: it starts empty."""
    shutil.rmtree(session_storage)
    session_storage.mkdir()


REHEARSAL_NOTICE = "**Rehearsal mode: no model is in use; every reply is scripted.**"


@pytest.mark.slow
def test_make_rehearse_serves_an_s3_rendering_with_no_bucket_named(s3_agent, tmp_path):
    """Rehearsal needs no AWS at all: its runs are kept in the local folder, whatever the answer."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("AWS_", "STATE_", "RUN_", "VIRTUAL_ENV"))
    }
    env.update(PORT=str(port), HOME=str(tmp_path), AWS_EC2_METADATA_DISABLED="true")
    rehearsal = subprocess.Popen(
        ["make", "rehearse"],
        cwd=s3_agent,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # make, uv and the server: one group, stopped together
    )
    try:
        started = []
        for line in rehearsal.stderr:  # until it serves, or ends
            started.append(line)
            if "Serving on" in line:
                break
        assert "Serving on" in started[-1], "".join(started)[-3000:]
        hi = {"messages": [{"role": "user", "content": [{"text": "<@U1>: hi"}]}]}
        events = posted(f"http://127.0.0.1:{port}", "slack_T1_C1_rehearse.000100", hi)
    finally:
        os.killpg(rehearsal.pid, signal.SIGTERM)
        rehearsal.communicate(timeout=30)

    assert events[0]["data"].startswith(REHEARSAL_NOTICE), events
    assert any("kept in the folder" in line for line in started), "".join(started)


@pytest.mark.slow
def test_a_question_kept_in_the_bucket_is_answered_after_a_kill_and_a_deploy(
    agents, deployed_env, s3_server
):
    session = "slack_T1_C1_killed.000100"
    (first,) = agents()
    (question,) = interrupts(first.say(session, "<@U1>: hi"))
    kept = stored_keys(s3_server, deployed_env["STATE_BUCKET"])
    assert f"{deployed_env['STATE_PREFIX']}threads/{session}.json" in kept

    first.kill()
    a_deploy(agents.session_storage)
    (second,) = agents()
    (review,) = interrupts(second.answer(session, question["id"], "ok"))
    finished = second.answer(session, review["id"], True, "option")  # rehearsal's draft: Publish

    assert RESUMED in finished[-1].get("data", ""), finished


@pytest.mark.slow
def test_the_same_answer_sent_to_two_processes_at_once_resumes_the_run_once(agents):
    session = "slack_T1_C1_twice.000100"
    servers = agents(2)
    (question,) = interrupts(servers[0].say(session, "<@U1>: hi"))

    with ThreadPoolExecutor(max_workers=2) as pool:
        replies = list(
            pool.map(lambda server: server.answer(session, question["id"], "ok"), servers)
        )

    refused = [events for events in replies if "error" in events[0]]
    assert len(refused) == 1, replies
    assert len(refused[0]) == 1, refused
