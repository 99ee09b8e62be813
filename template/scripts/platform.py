"""Show or choose the deployed runtime's AgentCore platform version: V1 or V2.

    python scripts/platform.py show    # make platform
    python scripts/platform.py v2      # make platform-v2
    python scripts/platform.py v1      # make platform-v1

V2 snapshots the started agent and restores it for each new session. The
AgentCore CLI cannot choose it, nor V2's one hook (a POST to the agent before
the snapshot), so this does it with boto3: it reads the runtime with
GetAgentRuntime and writes it back with UpdateAgentRuntime, changing only
`platformVersion` and `hooksConfiguration`. Every other field UpdateAgentRuntime
accepts goes back as GetAgentRuntime returned it: the list comes from
botocore's service model, so a field AWS adds later is kept too. An update
makes a new runtime version, as a deploy does.

The runtime: RUNTIME_ID (`make platform RUNTIME_ID=...`), else the one
ListAgentRuntimes names after agentcore/agentcore.json (the CLI deploys a
runtime as `<project name>_<runtime name>`). The Region: AWS's usual settings
(AWS_REGION, AWS_DEFAULT_REGION, the profile), else agentcore/aws-targets.json.
It needs AWS credentials; every failure is one line on stderr.
"""

import argparse
import copy
import json
import os
import sys
from pathlib import Path
from typing import NoReturn

# This file has the name of the standard library's `platform`, which botocore
# imports. Run as a script, its own folder comes first on the import path:
# take it off before anything imports botocore.
HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

import boto3  # noqa: E402
from botocore.exceptions import BotoCoreError, ClientError  # noqa: E402

PROJECT = HERE.parent
AGENTCORE = PROJECT / "agentcore"
SERVICE = "bedrock-agentcore-control"

# V2's one hook: AgentCore POSTs here once, before it takes the snapshot, and
# the create or update fails unless the agent answers 2xx within 120 s. The
# path is at most 32 characters and neither /invocations nor /ping.
WARMUP_PATH = "/warmup"
APP_PORT = 8080
WARMUP = {"action": {"httpPost": {"path": WARMUP_PATH, "port": APP_PORT}}}

# V2's budget for environment variables, by build: the UTF-8 bytes of every
# name and value, summed (no `=` or separators). AWS says 1.5 KB and 2.5 KB;
# read as 1,000-byte KB, the stricter reading. (V1 allows 4 KB.)
V2_ENV_BUDGET = {"CodeZip": 1500, "Container": 2500}

BUSY = {"CREATING", "UPDATING", "DELETING"}


def fail(message: str) -> NoReturn:
    raise SystemExit(f"platform: {message}")


def env_bytes(variables) -> int:
    """What V2 counts of (name, value) pairs: each name and value in UTF-8 bytes, summed."""
    return sum(len(name.encode()) + len(value.encode()) for name, value in variables)


def carried_fields(client) -> list[str]:
    """What UpdateAgentRuntime accepts and GetAgentRuntime returns, from the service model."""
    model = client.meta.service_model
    accepted = model.operation_model("UpdateAgentRuntime").input_shape.members
    returned = model.operation_model("GetAgentRuntime").output_shape.members
    for needed in ("platformVersion", "hooksConfiguration"):
        if needed not in accepted:
            fail(f"this botocore's {SERVICE} has no {needed}: run `make install` (boto3>=1.44.0)")
    return [name for name in accepted if name in returned]


def update_request(client, runtime: dict, version: str) -> dict:
    """UpdateAgentRuntime's parameters: the runtime as read, with `version` and its hook."""
    request = {name: runtime[name] for name in carried_fields(client) if name in runtime}
    request["platformVersion"] = version
    hooks = copy.deepcopy(request.pop("hooksConfiguration", {}))
    if version == "V2":  # the warm-up hook, keeping any other hook the runtime has
        hooks.setdefault("build", {})["warmup"] = WARMUP
        request["hooksConfiguration"] = hooks
    return request  # V1 goes without hooksConfiguration: only V2 microVMs run hooks


def build_of(runtime: dict) -> str:
    artifact = runtime.get("agentRuntimeArtifact", {})
    return "CodeZip" if "codeConfiguration" in artifact else "Container"


def describe(runtime: dict) -> str:
    version = runtime.get("platformVersion") or "not reported (the service default)"
    warmup = runtime.get("hooksConfiguration", {}).get("build", {}).get("warmup")
    if warmup:
        post = warmup["action"].get("httpPost", {})
        hook = f"POST {post.get('path')} on port {post.get('port', 'default')}"
    else:
        hook = "none"
    return f"platform version: {version}\nwarm-up hook: {hook}"


def region_name(session) -> str:
    if os.environ.get("AWS_REGION") or session.region_name:  # botocore reads only the latter
        return os.environ.get("AWS_REGION") or session.region_name
    try:
        targets = json.loads((AGENTCORE / "aws-targets.json").read_text())
    except (OSError, ValueError):
        targets = []
    named = [target for target in targets if target.get("name") == "default"] or targets
    if len(named) == 1 and named[0].get("region"):
        return named[0]["region"]
    fail("no AWS Region: set AWS_REGION, or one target's region in agentcore/aws-targets.json")


def connect():
    session = boto3.Session()
    if session.get_credentials() is None:
        fail(
            "no AWS credentials: set AWS_PROFILE (after `aws sso login`) or AWS_ACCESS_KEY_ID"
            " for the account the agent is deployed to"
        )
    return session.client(SERVICE, region_name=region_name(session))


def runtime_names() -> list[str]:
    """The names `agentcore deploy` gives the runtimes in agentcore.json, and the bare names."""
    try:
        config = json.loads((AGENTCORE / "agentcore.json").read_text())
    except (OSError, ValueError) as error:
        fail(f"cannot read agentcore/agentcore.json ({error}): give RUNTIME_ID=...")
    names = []
    for runtime in config.get("runtimes", []):
        names += [f"{config['name']}_{runtime['name']}", runtime["name"]]
    return list(dict.fromkeys(names))


def find_runtime_id(client) -> str:
    if os.environ.get("RUNTIME_ID"):
        return os.environ["RUNTIME_ID"]
    names = runtime_names()
    found, seen, token = [], [], None
    while True:
        page = client.list_agent_runtimes(**({"nextToken": token} if token else {}))
        for runtime in page.get("agentRuntimes", []):
            seen.append(runtime["agentRuntimeName"])
            if runtime["agentRuntimeName"] in names:
                found.append(runtime["agentRuntimeId"])
        token = page.get("nextToken")
        if not token:
            break
    where = client.meta.region_name
    if len(found) == 1:
        return found[0]
    if found:
        fail(f"several runtimes named {' or '.join(names)} in {where}: give RUNTIME_ID=...")
    fail(
        f"no runtime named {' or '.join(names)} in {where} (found: {', '.join(seen) or 'none'});"
        " deploy first, or give RUNTIME_ID=... or AWS_REGION=..."
    )


def read(client, runtime_id: str) -> dict:
    runtime = client.get_agent_runtime(agentRuntimeId=runtime_id)
    runtime.pop("ResponseMetadata", None)
    return runtime


def choose(client, runtime: dict, version: str) -> None:
    request = update_request(client, runtime, version)
    if runtime.get("platformVersion") == version and runtime.get(
        "hooksConfiguration"
    ) == request.get("hooksConfiguration"):
        print(f"already {version}, nothing to change\n{describe(runtime)}")
        return
    if runtime.get("status") in BUSY:
        fail(f"the runtime is {runtime['status']}: run this again when it is READY")
    if version == "V2":
        build = build_of(runtime)
        if build == "Container" and os.environ.get("SNAPSAFE_IMAGE") != "1":
            fail(
                "this runtime runs the Container image, whose OpenSSL (Debian's) is not"
                " snapshot-safe, and V2 restores every session from one snapshot: deploy"
                " with deploy_build=CodeZip (AWS's base is snapshot-safe), or rebuild the"
                " image on a snapshot-safe base and run again with SNAPSAFE_IMAGE=1"
            )
        used = env_bytes(runtime.get("environmentVariables", {}).items())
        if used > V2_ENV_BUDGET[build]:
            fail(
                f"its environment variables take {used} bytes, over V2's {V2_ENV_BUDGET[build]}"
                f" for {build}: shorten them in agentcore/agentcore.json and deploy first"
            )
    updated = client.update_agent_runtime(**request)
    print(
        f"updated {updated['agentRuntimeId']} to version {updated['agentRuntimeVersion']}"
        f" ({updated['status']}); `make platform` shows it once READY\n{describe(request)}"
    )


def main(argv: list[str] | None = None, client=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["show", "v1", "v2"])
    action = parser.parse_args(argv).action
    try:
        client = client or connect()
        runtime = read(client, find_runtime_id(client))
        if action == "show":
            print(
                f"runtime {runtime['agentRuntimeId']} (version {runtime['agentRuntimeVersion']},"
                f" {runtime['status']}) in {client.meta.region_name}\n{describe(runtime)}"
            )
        else:
            choose(client, runtime, action.upper())
    except (BotoCoreError, ClientError) as error:
        fail(str(error))


if __name__ == "__main__":
    main()
