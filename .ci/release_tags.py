#!/usr/bin/env python3
"""Tag the template's releases, the way copier reads them: one PEP 440 git tag each.

copier knows a release only as a git tag (`copier copy --vcs-ref 0.8.0`, and
`copier update` moves to the newest tag). This script works out, from the
repository's history, which commit each release is, checks it, and tags the
releases that have no tag yet. It never moves or deletes a tag.

Which commit a release is:

- A release made before this repository had tags is in `UNTAGGED_RELEASES`
  below, with the reason for its commit. The script checks that the commit
  is in HEAD's history and carries the version (as `template_version` in
  copier.yml, or as the newest heading of CHANGELOG.md before that setting
  existed).
- Any later release is the first commit, on HEAD's first-parent line (main
  as it was pushed), where copier.yml's `template_version` is that version
  and CHANGELOG.md has its section. So raise the version, with its section,
  in the commit that completes the release, or merge the release into main
  with a merge commit, which is then the tagged commit.

It stops, tagging nothing, with one line on stderr and exit status 1 when
CHANGELOG.md has no `## <version>` section for a release (the newest one
included: copier.yml's `template_version`), when a tag of a release's name
points at another commit, or when history does not hold a listed commit.

    python3 .ci/release_tags.py            # tag what is missing, list every release
    python3 .ci/release_tags.py --check    # check and list only; tag nothing

Standard library only: the release workflow runs it with the runner's python3.
"""

from __future__ import annotations

import argparse
import itertools
import re
import subprocess
import sys

# Releases made before this repository had tags. Each version was raised in
# copier.yml at the start of its work, not at its end (0.7.0's raise is a
# WIP commit), and CHANGELOG.md's section kept growing after the raise; so
# each release is the last commit of its work, before the next release's
# began: what a copy was made from, and what tests/test_update.py updates
# from. 0.1.0 to 0.3.0 predate `template_version` (0.4.0 added it), so
# their version is CHANGELOG.md's newest heading.
UNTAGGED_RELEASES = {
    # the last commit before "Platform 0.2.0"
    "0.1.0": "540a4f656f987927ed7731683057336bd486af3f",
    # the last commit before 0.3.0's first (WIP) commit, app/
    "0.2.0": "15d005b668d34233018e1c72fa65a3741d63c02c",
    # the last commit whose CHANGELOG.md is newest at 0.3.0
    "0.3.0": "c98cfe3ef8625d3db6e249c4cac93cab9a91d245",
    # from here: the last commit of the version before the next one's raise ...
    "0.4.0": "7ea269b3e417cfb29023b3d2f86b1ee5087e32c7",
    "0.5.0": "3f786207bb5e7e2392fd238d116a6a6c0d4dcd06",
    "0.5.1": "11b59264f97049374c80a51817b00b3b2375d647",
    # ... or the last before the next release's work began, under this version
    "0.6.0": "2a1b1410457752c03a4527432a99e24241a43c5a",  # then links, types, layout
    "0.7.0": "3f86cce3109964d4b01aab178ff22cc5b1307a2f",  # then 0.8.0's test loops
    "0.8.0": "8c604d190e6a192a9db896265ef32a9ee704b5eb",  # then 0.9.0's memory
    "0.9.0": "b81081c7df7454e90463d209a067fc8565a48013",  # then 0.10.0's WIP
    # main when tags were introduced: its six commits after the raise
    # (51feb36) are 0.10.0's fixes, and a project copied from any of them
    # could not update to a tag behind it ("You are downgrading").
    "0.10.0": "8624bdaf7aaf71804b26b19594bc818d8f6d7401",
}

VERSION = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")


class Refused(Exception):
    """A reason to tag nothing, said in one line."""


def git(repo: str, *args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["git", "-C", repo, *args], input=stdin, capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines() or ["failed"]
        raise Refused(f"git {args[0]}: {message[-1]}")
    return done.stdout


def files_at(repo: str, specs: list[str]) -> list[str | None]:
    """The text of each `<commit>:<path>`, None where there is no such file, in one git call."""
    out = git(repo, "cat-file", "--batch", stdin="".join(f"{spec}\n" for spec in specs).encode())
    texts: list[str | None] = []
    at = 0
    for _ in specs:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if header[-1] == b"missing" or header[1] != b"blob":
            texts.append(None)
            continue
        size = int(header[2])
        texts.append(out[at : at + size].decode())
        at += size + 1
    return texts


def template_version(copier_yml: str | None) -> str | None:
    """`template_version`'s default in copier.yml's text (or its short form's value)."""
    if copier_yml is None:
        return None
    found = re.search(
        r"^template_version:[ \t]*([^\n#]*)(?:#[^\n]*)?\n((?:[ \t]+[^\n]*\n|[ \t]*\n)*)",
        copier_yml + "\n",
        re.M,
    )
    if found is None:
        return None
    value = found.group(1).strip()
    if not value:
        default = re.search(r"^[ \t]+default:[ \t]*([^\s#]+)", found.group(2), re.M)
        value = default.group(1) if default else ""
    return value.strip("\"'") or None


def changelog_versions(changelog: str | None) -> list[str]:
    """CHANGELOG.md's release headings (`## 0.9.0`), newest first."""
    return re.findall(r"^## (\S+)[ \t]*$", changelog or "", re.M)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.match(r"\d+(\.\d+)*", version).group(0).split("."))


def releases(repo: str) -> dict[str, str]:
    """Each release's version and full commit hash, oldest first, checked against history."""
    head = git(repo, "rev-parse", "HEAD").decode().strip()
    current, changelog = files_at(repo, [f"{head}:copier.yml", f"{head}:CHANGELOG.md"])
    version = template_version(current)
    if version is None:
        raise Refused("copier.yml at HEAD has no template_version")
    if not VERSION.fullmatch(version):
        raise Refused(f"template_version {version!r} in copier.yml is not a PEP 440 release")

    # Where each version was first raised with its CHANGELOG.md section, along
    # the first-parent line.
    line = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").decode().split()
    texts = files_at(repo, [f"{c}:{path}" for c in line for path in ("copier.yml", "CHANGELOG.md")])
    raised: dict[str, str] = {}
    for commit, yml, log in zip(line, texts[::2], texts[1::2], strict=True):
        name = template_version(yml)
        if name and name in changelog_versions(log):
            raised.setdefault(name, commit)
    found = {**raised, **UNTAGGED_RELEASES}

    for name, commit in UNTAGGED_RELEASES.items():
        if not git_ok(repo, "cat-file", "-e", f"{commit}^{{commit}}"):
            raise Refused(
                f"release {name}'s commit {commit[:12]} is not in this clone: "
                "fetch the whole history (git fetch --unshallow)"
            )
        if not git_ok(repo, "merge-base", "--is-ancestor", commit, head):
            raise Refused(f"release {name}'s commit {commit[:12]} is not in HEAD's history")
    listed = list(UNTAGGED_RELEASES.values())
    texts = files_at(
        repo, [f"{c}:{path}" for c in listed for path in ("copier.yml", "CHANGELOG.md")]
    )
    pairs = zip(UNTAGGED_RELEASES.items(), texts[::2], texts[1::2], strict=True)
    for (name, commit), yml, log in pairs:
        carried = template_version(yml) or next(iter(changelog_versions(log)), None)
        if carried != name:
            raise Refused(
                f"release {name}'s commit {commit[:12]} carries version {carried}, not {name}"
            )

    headings = set(changelog_versions(changelog))
    ordered = sorted(found, key=version_key)
    for name in [version, *reversed(ordered)]:
        if name not in headings:
            raise Refused(
                f"CHANGELOG.md has no '## {name}' section for release {name} "
                "(template_version in copier.yml): write its entry; nothing tagged"
            )
    for older, newer in itertools.pairwise(ordered):
        if not git_ok(repo, "merge-base", "--is-ancestor", found[older], found[newer]):
            raise Refused(
                f"release {older} ({found[older][:12]}) is not in the history of "
                f"release {newer} ({found[newer][:12]}): versions must rise along history"
            )
    return {name: found[name] for name in ordered}


def git_ok(repo: str, *args: str) -> bool:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True).returncode == 0


def tagged(repo: str, name: str) -> str | None:
    """The commit the tag `name` points at, if there is such a tag."""
    done = subprocess.run(
        ["git", "-C", repo, "rev-parse", "-q", "--verify", f"refs/tags/{name}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="check and list; create no tag")
    parser.add_argument("--repo", default=".", help="the template's git repository (default: .)")
    arguments = parser.parse_args(argv)
    try:
        found = releases(arguments.repo)
        existing = {name: tagged(arguments.repo, name) for name in found}
        for name, commit in found.items():
            if existing[name] not in (None, commit):
                raise Refused(
                    f"tag {name} points at {existing[name][:12]}, but release {name} is "
                    f"{commit[:12]}: nothing tagged; move or delete the tag by hand if it is wrong"
                )
        for name, commit in found.items():
            if existing[name]:
                state = "tagged already"
            elif arguments.check:
                state = "not tagged"
            else:
                git(arguments.repo, "tag", name, commit)
                state = "tagged now"
            print(f"{name} {commit} {state}")
    except Refused as refused:
        print(f"release_tags: {refused}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
