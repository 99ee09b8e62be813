"""The other end of each range: the generated suite at the newest releases (see test_compatibility).

A module of its own, so that pytest-xdist runs it beside the floors. Only the
richest rendering runs here: the default rendering's fresh `make install` in
test_generated_project.py already resolves the newest releases, and is
checked there to have them.
"""

import pytest
from conftest import python_for
from test_compatibility import (
    PINNED,
    RENDERINGS,
    assert_checks_pass,
    environment,
    installed,
    pip_list,
    render,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    return render(tmp_path_factory.mktemp("newest") / "agent", **RENDERINGS["richest"])


def test_generated_suite_passes_at_the_newest_releases_on_the_highest_python(
    rendered, tmp_path
):
    python = python_for("3.13")
    project = environment(rendered, tmp_path, python, "--upgrade")

    versions = installed(project, python)
    assert set(PINNED) <= set(versions)
    outdated = pip_list(project, python, "--outdated", "--format", "json")
    behind = {entry["name"] for entry in outdated} & set(PINNED)
    assert behind == set(), f"not at the newest release: {behind}"
    assert_checks_pass(project, python)
