"""What a deploy ships: only the code in app/, with uv.lock's versions.

`agentcore package` (CodeZip) zips everything under codeLocation but a few
build folders, and installs app/pyproject.toml's dependencies without
reading uv.lock; the container build copies the same folder.
"""

import os
import subprocess
import sys

import pytest
from conftest import CODE, PROJECT, Thread, answer_every_question, local_client

# What the AgentCore CLI (0.30) leaves out when it copies codeLocation.
CLI_SKIPS = {".git", ".venv", "__pycache__", ".pytest_cache", ".DS_Store", "node_modules"}
SOURCE_SUFFIXES = {".py", ".json", ".toml"}


def shipped_files() -> set[str]:
    """The files the CLI would put in the zip, relative to app/, as it walks the folder."""
    shipped = set()
    for folder, subfolders, files in os.walk(CODE):
        subfolders[:] = [name for name in subfolders if name not in CLI_SKIPS]
        if folder == str(CODE) and "agentcore" in subfolders:
            subfolders.remove("agentcore")
        for name in files:
            if name in CLI_SKIPS or name == ".env" or name.startswith(".env."):
                continue
            shipped.add(os.path.relpath(os.path.join(folder, name), CODE))
    return shipped


def test_the_code_folder_holds_only_code_after_a_served_turn(rehearsal_server):
    url, _ = rehearsal_server
    with local_client(url, retries=5, timeout=30) as client:
        thread = Thread(client, model=None, checked=True)
        answer_every_question(thread, thread.say("hi"))

    shipped = shipped_files()

    assert {"main.py", "pyproject.toml"} <= shipped
    not_code = sorted(path for path in shipped if os.path.splitext(path)[1] not in SOURCE_SUFFIXES)
    assert not not_code, f"app/ would ship files that are not code: {not_code}"
    assert not [path for path in shipped if path.startswith(".")]


@pytest.mark.slow  # runs uv
def test_codezip_pins_are_exactly_uv_lock():
    checked = subprocess.run(
        [sys.executable, "scripts/runtime_pins.py", "--check"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )

    assert checked.returncode == 0, checked.stderr
