"""Files for deploying and running: AgentCore CLI config, Dockerfile, task menu."""

import json
import re
import subprocess

import pytest

import tomllib

AGENTCORE_TOP_LEVEL = {"$schema", "name", "version", "managedBy", "runtimes"}
RUNTIME_REQUIRED = {"name", "build", "entrypoint", "codeLocation", "runtimeVersion"}
AGENTCORE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,22}")


@pytest.mark.parametrize("python_version", ["3.12", "3.13"])
def test_agentcore_config_follows_the_cli_rules(project, python_version):
    root = project(agent_name="BillingBot", python_version=python_version)

    config = json.loads((root / "agentcore" / "agentcore.json").read_text())

    assert set(config) <= AGENTCORE_TOP_LEVEL
    assert {"name", "version", "runtimes"} <= set(config)
    assert AGENTCORE_NAME.fullmatch(config["name"])
    (runtime,) = config["runtimes"]
    assert RUNTIME_REQUIRED <= set(runtime)
    assert AGENTCORE_NAME.fullmatch(runtime["name"])
    assert runtime["runtimeVersion"] == f"PYTHON_{python_version.replace('.', '_')}"
    assert runtime["build"] == "CodeZip"
    code = root / runtime["codeLocation"]
    assert (code / runtime["entrypoint"]).is_file()
    assert tomllib.loads((code / "pyproject.toml").read_text())["project"]["dependencies"]


def test_runs_waiting_for_an_answer_are_kept_on_agentcore_session_storage(project):
    (runtime,) = json.loads((project() / "agentcore" / "agentcore.json").read_text())["runtimes"]

    (storage,) = runtime["filesystemConfigurations"]
    mount = storage["sessionStorage"]["mountPath"]
    assert re.fullmatch(r"/mnt/[a-zA-Z0-9._-]+", mount)  # the CLI's rule: one folder under /mnt
    assert {"name": "SESSION_STORAGE_DIR", "value": mount} in runtime["envVars"]
    lifecycle = runtime["lifecycleConfiguration"]
    assert 60 <= lifecycle["idleRuntimeSessionTimeout"] <= lifecycle["maxLifetime"] <= 28800


def test_aws_targets_name_an_account_and_a_region(project):
    targets = json.loads((project() / "agentcore" / "aws-targets.json").read_text())

    assert targets and all({"name", "account", "region"} <= set(target) for target in targets)
    assert all(re.fullmatch(r"\d{12}", target["account"]) for target in targets)


def test_dockerfile_builds_arm64_from_the_lockfile_as_a_non_root_user(project):
    dockerfile = (project(python_version="3.12") / "Dockerfile").read_text()

    assert re.search(r"^FROM --platform=linux/arm64 \S+python3\.12\S*", dockerfile, re.M)
    assert "uv sync --frozen --no-dev" in dockerfile
    assert "COPY pyproject.toml uv.lock" in dockerfile
    assert "DOCKER_CONTAINER=1" in dockerfile  # makes the app bind 0.0.0.0
    assert re.search(r"^EXPOSE 8080$", dockerfile, re.M)
    user = re.findall(r"^USER (\S+)$", dockerfile, re.M)
    assert user and user[-1] not in ("root", "0")


@pytest.mark.parametrize(
    "target, command",
    [
        ("install", "uv sync"),
        ("serve", "uv run python main.py"),
        ("rehearse", "MODEL_PROVIDER=rehearsal uv run python main.py"),
        ("test", "uv run pytest"),
        ("lint", "uv run ruff check ."),
        ("deploy", "agentcore deploy"),
        ("update", "copier update"),
    ],
)
def test_task_menu_runs_the_documented_commands(project, target, command):
    root = project()

    dry_run = subprocess.run(["make", "-n", target], cwd=root, capture_output=True, text=True)

    assert dry_run.returncode == 0, dry_run.stderr
    assert command in dry_run.stdout


def test_agents_guide_walks_through_adding_gating_and_testing_a_tool(project):
    guide = (project() / "AGENTS.md").read_text()

    for step in ("## Add a tool", "Row(", "interrupt_name", "toolUseId", "## Test it"):
        assert step in guide


def test_make_alone_lists_every_task(project):
    root = project()

    listed = subprocess.run(["make"], cwd=root, capture_output=True, text=True)

    assert listed.returncode == 0, listed.stderr
    for task in ("install", "serve", "rehearse", "test", "lint", "update", "deploy"):
        assert f"make {task} " in listed.stdout


@pytest.mark.parametrize(
    "leftover, name",
    [
        ("<<<<<<< before updating\nmine\n=======\ntheirs\n>>>>>>> after updating\n", "gate.py"),
        ("--- a\n+++ b\n", "gate.py.rej"),
    ],
)
def test_the_update_check_fails_loudly_on_what_copier_left_to_merge(project, leftover, name):
    root = project()
    (root / name).write_text(leftover)

    checked = subprocess.run(["sh", "scripts/check-update.sh"], cwd=root, capture_output=True, text=True)

    assert checked.returncode == 1
    assert name in checked.stderr


def test_the_update_check_passes_a_clean_project(project):
    checked = subprocess.run(
        ["sh", "scripts/check-update.sh"], cwd=project(), capture_output=True, text=True
    )

    assert checked.returncode == 0, checked.stderr
