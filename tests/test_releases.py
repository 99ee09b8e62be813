"""Releases a user can name: .ci/release_tags.py tags them, copier reads the tags.

Every test works on a temporary clone of this repository's HEAD, made
without tags (a CI checkout may carry none), so no test depends on the
tags of the checkout. The clone needs the whole history, as CI checks out
(fetch-depth: 0). The copies are copier's own, from the clone: a few
seconds each, no environment built.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import TEMPLATE
from copier import run_copy, run_update

SCRIPT = TEMPLATE / ".ci" / "release_tags.py"
DOCS = [
    TEMPLATE / "docs" / "updating.md",
    TEMPLATE / "README.md",
    TEMPLATE / "docs" / "getting-started.md",
]
IDENTITY = ["-c", "user.name=Template Tests", "-c", "user.email=tests@example.invalid"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def clone(destination: Path) -> Path:
    """This repository's HEAD commit and its history, on branch main, with no tags."""
    destination.mkdir(parents=True)
    git(destination, "init", "-q", "-b", "main")
    git(destination, "fetch", "-q", "--no-tags", str(TEMPLATE), "HEAD")
    git(destination, "reset", "-q", "--hard", "FETCH_HEAD")
    assert git(destination, "rev-parse", "HEAD") == git(TEMPLATE, "rev-parse", "HEAD")
    assert git(destination, "tag") == ""
    return destination


def release_tags(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", str(repo), *args],
        capture_output=True,
        text=True,
    )


def tags(repo: Path) -> dict[str, str]:
    """Each tag of the repository and the commit it points at."""
    listed = git(
        repo, "for-each-ref", "--format=%(refname:strip=2) %(objectname)", "refs/tags"
    )
    return dict(line.split() for line in listed.splitlines())


def newest(versions) -> str:
    return max(versions, key=lambda version: tuple(map(int, version.split("."))))


def changelog_versions(text: str) -> list[str]:
    return re.findall(r"^## (\S+)$", text, re.M)


def docs_vcs_refs() -> list[tuple[str, str]]:
    """Each (document, ref) that `--vcs-ref` or `-r` names in the docs, in prose or a command."""
    named = []
    for document in DOCS:
        for line in document.read_text().splitlines():
            pattern = (
                r"--vcs-ref[ =]([^\s`),]+)"
                if "copier " not in line
                else r"(?:--vcs-ref|\s-r)[ =]([^\s`),]+)"
            )
            named += [(document.name, ref) for ref in re.findall(pattern, line)]
    return named


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    """A clone without tags, tagged by the script."""
    repo = clone(tmp_path_factory.mktemp("tagged") / "template")
    done = release_tags(repo)
    assert done.returncode == 0, done.stderr
    return repo


@pytest.fixture(scope="module")
def old_copy(tagged, tmp_path_factory) -> Path:
    """The release the docs copy by its tag, copied with every default and committed."""
    (version,) = {ref for _, ref in docs_vcs_refs() if ref != "HEAD"}
    project = tmp_path_factory.mktemp("old") / "agent"
    run_copy(str(tagged), project, defaults=True, vcs_ref=version, quiet=True)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "Generated from the template")
    return project


def test_the_script_tags_every_release_of_the_changelog_on_a_clone_without_tags(tagged):
    made = tags(tagged)
    changelog = (tagged / "CHANGELOG.md").read_text()

    assert set(made) == set(changelog_versions(changelog))
    for version, commit in made.items():
        released = yaml.safe_load(git(tagged, "show", f"{commit}:copier.yml"))
        log = git(tagged, "show", f"{commit}:CHANGELOG.md")
        # 0.4.0 brought template_version; before it, the newest CHANGELOG heading.
        if "template_version" in released:
            assert released["template_version"]["default"] == version, commit
        else:
            assert changelog_versions(log)[0] == version, commit
        assert f"## {version}" in log


def test_the_newest_tag_is_the_template_version_and_in_head_s_history(tagged):
    made = tags(tagged)
    version = yaml.safe_load((tagged / "copier.yml").read_text())["template_version"][
        "default"
    ]

    assert newest(made) == version
    git(tagged, "merge-base", "--is-ancestor", made[version], "HEAD")


def test_what_head_renders_is_the_newest_release(tagged):
    """copier copies the newest tag: a change to the template after it reaches nobody."""
    made = tags(tagged)
    version = newest(made)

    changed = git(
        tagged,
        "diff",
        "--name-only",
        made[version],
        "HEAD",
        "--",
        "template",
        "copier.yml",
    )

    assert not changed, (
        f"changed since release {version}, which copier copies instead: "
        f"{changed.split()}; raise template_version in copier.yml, with a CHANGELOG section"
    )


def test_a_second_run_tags_nothing_and_says_each_release_is_tagged(tagged, tmp_path):
    repo = shutil.copytree(tagged, tmp_path / "template", symlinks=True)
    before = tags(repo)
    assert before

    again = release_tags(repo)

    assert again.returncode == 0, again.stderr
    assert tags(repo) == before
    lines = again.stdout.splitlines()
    assert [line.split()[0] for line in lines] == sorted(
        before, key=lambda v: tuple(map(int, v.split(".")))
    )
    assert all(line.endswith("tagged already") for line in lines)


def test_the_check_tags_nothing(tmp_path):
    repo = clone(tmp_path / "template")
    checked = release_tags(repo, "--check")

    assert checked.returncode == 0, checked.stderr
    assert tags(repo) == {}
    assert all(line.endswith("not tagged") for line in checked.stdout.splitlines())


def test_this_checkout_s_tags_if_any_agree_with_the_script():
    checked = release_tags(TEMPLATE, "--check")

    assert checked.returncode == 0, checked.stderr


def test_the_docs_vcs_ref_examples_name_tags_the_script_makes(tagged):
    named = docs_vcs_refs()
    made = tags(tagged)

    assert any(ref != "HEAD" for _, ref in named), named
    assert [(doc, ref) for doc, ref in named if ref != "HEAD" and ref not in made] == []


def test_an_old_release_copies_by_its_tag_and_records_the_tag(old_copy):
    answers = (old_copy / ".copier-answers.yml").read_text()
    version = yaml.safe_load(answers)["_commit"]

    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert f"# Made from release {version} of the template ({version})." in answers


@pytest.mark.slow  # a whole copier update; the every-release journeys update every release
def test_the_old_copy_updates_to_the_newest_tag_without_a_conflict(
    old_copy, tagged, tmp_path
):
    project = tmp_path / "agent"
    shutil.copytree(old_copy, project, symlinks=True)
    target = newest(tags(tagged))

    run_update(project, defaults=True, overwrite=True, conflict="rej", quiet=True)
    # What `make update` runs next: the README's first merge since it became the template's.
    subprocess.run([sys.executable, "scripts/readme_merge.py"], cwd=project, check=True)

    answers = (project / ".copier-answers.yml").read_text()
    assert yaml.safe_load(answers)["_commit"] == target
    assert f"# Made from release {target} of the template ({target})." in answers
    assert sorted(project.rglob("*.rej")) == []
    status = git(project, "status", "--porcelain")
    assert "M .copier-answers.yml" in status
    # git grep exits 1 when it finds no conflict marker.
    conflicted = subprocess.run(
        ["git", "grep", "-l", "--untracked", "-E", "^(<<<<<<<|>>>>>>>) "],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert conflicted.returncode == 1, conflicted.stdout


def test_a_version_without_a_changelog_section_is_refused_in_one_line(tmp_path):
    repo = clone(tmp_path / "template")
    copier_yml = repo / "copier.yml"
    current = yaml.safe_load(copier_yml.read_text())["template_version"]["default"]
    copier_yml.write_text(
        copier_yml.read_text().replace(f'default: "{current}"', 'default: "99.0.0"')
    )
    git(repo, "commit", "-q", "-am", "99.0.0, without its changelog")

    refused = release_tags(repo)

    assert refused.returncode == 1
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "CHANGELOG.md has no '## 99.0.0' section" in refused.stderr
    assert tags(repo) == {}  # nothing tagged, not even the older releases


def test_a_new_version_is_tagged_where_its_changelog_section_arrives(tmp_path):
    repo = clone(tmp_path / "template")
    copier_yml, changelog = repo / "copier.yml", repo / "CHANGELOG.md"
    current = yaml.safe_load(copier_yml.read_text())["template_version"]["default"]
    copier_yml.write_text(
        copier_yml.read_text().replace(f'default: "{current}"', 'default: "99.0.0"')
    )
    git(repo, "commit", "-q", "-am", "99.0.0")
    changelog.write_text(
        changelog.read_text().replace(
            f"## {current}\n", f"## 99.0.0\n\nNews.\n\n## {current}\n", 1
        )
    )
    git(repo, "commit", "-q", "-am", "99.0.0's changelog")
    released = git(repo, "rev-parse", "HEAD").strip()
    (repo / "README.md").write_text("A later commit.\n")
    git(repo, "commit", "-q", "-am", "after the release")

    done = release_tags(repo)

    assert done.returncode == 0, done.stderr
    assert tags(repo)["99.0.0"] == released
    assert f"99.0.0 {released} tagged now" in done.stdout.splitlines()


def test_a_tag_of_a_release_on_another_commit_is_refused_in_one_line(tmp_path):
    repo = clone(tmp_path / "template")
    git(repo, "tag", "0.9.0", "HEAD")

    refused = release_tags(repo)

    assert refused.returncode == 1
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    assert refused.stderr.startswith("release_tags: tag 0.9.0 points at ")
    assert list(tags(repo)) == ["0.9.0"]  # nothing tagged, nothing moved
