"""scripts/platform.py (`make platform`, `platform-v2`, `platform-v1`), offline.

A real bedrock-agentcore-control client, built from botocore's service model,
answers through botocore's Stubber: nothing leaves this machine. The client
validates each request against the model before the Stubber sees it, and the
Stubber validates each recorded response, so both sides keep the model's shape.
"""

import datetime
import importlib.util
import json
import re
import subprocess
from pathlib import Path

import botocore.session
import pytest
from botocore.stub import Stubber

PROJECT = Path(__file__).resolve().parent.parent
# Imported by path under another name: `platform` is the standard library's.
_spec = importlib.util.spec_from_file_location(
    "platform_script", PROJECT / "scripts" / "platform.py"
)
platform_script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(platform_script)

RUNTIME_ID = "MyAgent_MyAgent-a1B2c3D4e5"
ACCOUNT = "123456789012"
ARN_PREFIX = f"arn:aws:bedrock-agentcore:us-east-1:{ACCOUNT}"
WARMUP_HOOK = {"build": {"warmup": {"action": {"httpPost": {"path": "/warmup", "port": 8080}}}}}

# What UpdateAgentRuntime accepts and GetAgentRuntime returns in boto3 1.44:
# the fields the recorded runtime below sets. The script takes its list from
# the model, so a field a later botocore adds is carried too.
KNOWN_CARRIED = {
    "agentRuntimeId",
    "agentRuntimeArtifact",
    "roleArn",
    "networkConfiguration",
    "description",
    "authorizerConfiguration",
    "requestHeaderConfiguration",
    "protocolConfiguration",
    "lifecycleConfiguration",
    "hooksConfiguration",
    "metadataConfiguration",
    "environmentVariables",
    "filesystemConfigurations",
    "capacityProviderConfiguration",
    "platformVersion",
    "allowedPorts",
    "resourceConfigurations",
}


def recorded_runtime(**changes) -> dict:
    """A GetAgentRuntime answer with every field UpdateAgentRuntime also accepts, set."""
    runtime = {
        "agentRuntimeArn": f"{ARN_PREFIX}:runtime/{RUNTIME_ID}",
        "agentRuntimeName": "MyAgent_MyAgent",
        "agentRuntimeId": RUNTIME_ID,
        "agentRuntimeVersion": "3",
        "createdAt": datetime.datetime(2026, 11, 2, 9, 30, tzinfo=datetime.UTC),
        "lastUpdatedAt": datetime.datetime(2026, 11, 20, 16, 5, tzinfo=datetime.UTC),
        "roleArn": f"arn:aws:iam::{ACCOUNT}:role/MyAgent-RuntimeExecutionRole-Q1W2E3R4T5Y6",
        "networkConfiguration": {
            "networkMode": "VPC",
            "networkModeConfig": {
                "securityGroups": ["sg-0123456789abcdef0"],
                "subnets": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
                "requireServiceS3Endpoint": True,
            },
        },
        "status": "READY",
        "lifecycleConfiguration": {"idleRuntimeSessionTimeout": 900, "maxLifetime": 28800},
        "hooksConfiguration": {
            "build": {"warmup": {"action": {"httpPost": {"path": "/prime", "port": 9000}}}}
        },
        "description": "AgentCore Runtime: MyAgent_MyAgent",
        "workloadIdentityDetails": {
            "workloadIdentityArn": f"{ARN_PREFIX}:workload-identity-directory/default/"
            "workload-identity/MyAgent_MyAgent-a1B2"
        },
        "agentRuntimeArtifact": {
            "codeConfiguration": {
                "code": {
                    "s3": {
                        "bucket": "cdk-hnb659fds-assets-123456789012-us-east-1",
                        "prefix": "4f1c0a9e8d7b6a5f4e3d2c1b0a9f8e7d.zip",
                        "versionId": "3HL4kqtJlcpXroDTDmJ-rmSpXd3dIbrHY",
                    }
                },
                "runtime": "PYTHON_3_13",
                "entryPoint": ["opentelemetry-instrument", "main.py"],
            }
        },
        "protocolConfiguration": {"serverProtocol": "HTTP", "port": 8080, "path": "/invocations"},
        "environmentVariables": {"SESSION_STORAGE_DIR": "/mnt/sessions", "LOG_LEVEL": "INFO"},
        "authorizerConfiguration": {
            "customJWTAuthorizer": {
                "discoveryUrl": "https://cognito-idp.us-east-1.amazonaws.com/"
                "us-east-1_AbCdEf123/.well-known/openid-configuration",
                "allowedClients": ["4kq2j1example7client"],
                "allowedAudience": ["welt"],
            }
        },
        "requestHeaderConfiguration": {
            "requestHeaderAllowlist": ["X-Amzn-Bedrock-AgentCore-Runtime-Custom-Team"]
        },
        "metadataConfiguration": {"requireMMDSV2": True},
        "filesystemConfigurations": [{"sessionStorage": {"mountPath": "/mnt/sessions"}}],
        "capacityProviderConfiguration": {
            "capacityProviderArn": f"{ARN_PREFIX}:capacity-provider/MyAgentPool-z9Y8x7W6v5",
        },
        "platformVersion": "V1",
        "allowedPorts": [{"port": 8080}, {"portRange": {"from": 9000, "to": 9010}}],
        "resourceConfigurations": [{"minimumMemoryInMiB": 2048}],
    }
    runtime.update(changes)
    return {name: value for name, value in runtime.items() if value is not None}


@pytest.fixture(scope="module")
def client():
    session = botocore.session.get_session()
    return session.create_client(
        "bedrock-agentcore-control",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def stub(client, monkeypatch):
    for name in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "RUNTIME_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("RUNTIME_ID", RUNTIME_ID)
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def expect_get(stub, runtime: dict) -> None:
    stub.add_response("get_agent_runtime", runtime, {"agentRuntimeId": RUNTIME_ID})


def expect_update(stub, request: dict) -> None:
    answer = {
        "agentRuntimeArn": f"{ARN_PREFIX}:runtime/{RUNTIME_ID}",
        "agentRuntimeId": RUNTIME_ID,
        "agentRuntimeVersion": "4",
        "createdAt": datetime.datetime(2026, 11, 2, 9, 30, tzinfo=datetime.UTC),
        "lastUpdatedAt": datetime.datetime(2026, 12, 1, 10, 0, tzinfo=datetime.UTC),
        "status": "UPDATING",
    }
    stub.add_response("update_agent_runtime", answer, request)


def test_the_carried_fields_come_from_the_service_model(client):
    carried = set(platform_script.carried_fields(client))
    model = client.meta.service_model

    assert carried >= KNOWN_CARRIED
    assert carried == set(model.operation_model("UpdateAgentRuntime").input_shape.members) & set(
        model.operation_model("GetAgentRuntime").output_shape.members
    )
    assert "clientToken" not in carried and "status" not in carried


def test_v2_carries_every_field_over_and_adds_the_warmup_hook(client, stub, capsys):
    runtime = recorded_runtime()  # V1, with another hook than ours
    assert set(runtime) >= KNOWN_CARRIED
    expected = {name: runtime[name] for name in KNOWN_CARRIED}
    expected |= {"platformVersion": "V2", "hooksConfiguration": WARMUP_HOOK}
    expect_get(stub, runtime)
    expect_update(stub, expected)  # matched exactly, after the client validated it

    platform_script.main(["v2"], client=client)

    out = capsys.readouterr().out
    assert "to version 4 (UPDATING)" in out
    assert "platform version: V2" in out and "POST /warmup on port 8080" in out


def test_the_warmup_hook_has_the_shape_and_path_agentcore_accepts(client):
    request = platform_script.update_request(client, recorded_runtime(), "V2")
    hook = request["hooksConfiguration"]["build"]["warmup"]["action"]["httpPost"]
    model = client.meta.service_model
    path_shape = model.shape_for("HttpPostLifecycleHookAction").members["path"]

    assert request["hooksConfiguration"] == WARMUP_HOOK
    assert hook["path"] not in ("/invocations", "/ping")
    assert len(hook["path"]) <= min(32, path_shape.metadata["max"])
    assert re.fullmatch(path_shape.metadata["pattern"], hook["path"])
    assert hook["port"] == 8080


def test_v1_drops_the_hook_and_keeps_the_rest(client, stub, capsys):
    runtime = recorded_runtime(platformVersion="V2", hooksConfiguration=WARMUP_HOOK)
    expected = {name: runtime[name] for name in KNOWN_CARRIED - {"hooksConfiguration"}}
    expected["platformVersion"] = "V1"
    expect_get(stub, runtime)
    expect_update(stub, expected)

    platform_script.main(["v1"], client=client)

    assert "platform version: V1\nwarm-up hook: none" in capsys.readouterr().out


def test_nothing_is_updated_when_the_runtime_already_is_v2(client, stub, capsys):
    expect_get(stub, recorded_runtime(platformVersion="V2", hooksConfiguration=WARMUP_HOOK))

    platform_script.main(["v2"], client=client)  # the Stubber refuses any call not queued

    assert "already V2" in capsys.readouterr().out


def test_v2_refuses_environment_variables_over_its_budget(client, stub):
    too_many = {f"SETTING_{n:02}": "x" * 100 for n in range(20)}  # CodeZip: 1500 bytes at most
    expect_get(stub, recorded_runtime(environmentVariables=too_many))

    with pytest.raises(SystemExit, match="over V2's 1500 for CodeZip"):
        platform_script.main(["v2"], client=client)


def container_runtime() -> dict:
    image = {"containerUri": f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/agent:latest"}
    return recorded_runtime(agentRuntimeArtifact={"containerConfiguration": image})


def test_v2_refuses_a_container_image_whose_openssl_is_not_snapshot_safe(client, stub):
    expect_get(stub, container_runtime())

    with pytest.raises(SystemExit, match="not snapshot-safe"):
        platform_script.main(["v2"], client=client)


def test_make_platform_prints_the_current_version(client, stub, capsys):
    dry_run = subprocess.run(
        ["make", "-n", "platform"], cwd=PROJECT, capture_output=True, text=True
    )
    assert dry_run.returncode == 0, dry_run.stderr
    command = dry_run.stdout.split()
    arguments = command[command.index("scripts/platform.py") + 1 :]
    expect_get(stub, recorded_runtime(platformVersion="V2", hooksConfiguration=WARMUP_HOOK))

    platform_script.main(arguments, client=client)

    out = capsys.readouterr().out
    assert f"runtime {RUNTIME_ID} (version 3, READY) in us-east-1" in out
    assert "platform version: V2" in out
    assert "warm-up hook: POST /warmup on port 8080" in out


def test_without_runtime_id_the_runtime_is_found_by_its_deployed_name(client, stub, monkeypatch):
    monkeypatch.delenv("RUNTIME_ID")
    config = json.loads((PROJECT / "agentcore" / "agentcore.json").read_text())
    deployed = f"{config['name']}_{config['runtimes'][0]['name']}"  # as `agentcore deploy` names it
    listed = {
        "agentRuntimes": [
            {
                "agentRuntimeArn": f"{ARN_PREFIX}:runtime/{name}-{n}",
                "agentRuntimeId": f"{name}-{n}",
                "agentRuntimeVersion": "1",
                "agentRuntimeName": name,
                "description": f"AgentCore Runtime: {name}",
                "lastUpdatedAt": datetime.datetime(2026, 11, 20, tzinfo=datetime.UTC),
                "status": "READY",
            }
            for name, n in (("OtherAgent", "k9J8h7G6f5"), (deployed, "a1B2c3D4e5"))
        ]
    }
    stub.add_response("list_agent_runtimes", listed, {})

    assert platform_script.find_runtime_id(client) == f"{deployed}-a1B2c3D4e5"


CREDENTIAL_SOURCES = (
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
)


def test_without_credentials_it_fails_in_one_line(monkeypatch, tmp_path):
    for name in CREDENTIAL_SOURCES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")

    with pytest.raises(SystemExit) as failed:
        platform_script.main(["show"])

    message = str(failed.value.code)
    assert message.startswith("platform: no AWS credentials") and "\n" not in message


def test_the_region_comes_from_aws_settings_else_aws_targets_json(monkeypatch, tmp_path):
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    targets = [
        {"name": "staging", "region": "eu-west-1"},
        {"name": "default", "region": "us-west-2"},
    ]
    (tmp_path / "aws-targets.json").write_text(json.dumps(targets))
    monkeypatch.setattr(platform_script, "AGENTCORE", tmp_path)

    assert platform_script.region_name(platform_script.boto3.Session()) == "us-west-2"
    monkeypatch.setenv("AWS_REGION", "ap-northeast-1")
    assert platform_script.region_name(platform_script.boto3.Session()) == "ap-northeast-1"


def test_agentcore_json_environment_variables_fit_v2_budget():
    # V2 allows 1.5 KB of environment variables for CodeZip and 2.5 KB for a
    # container. Counted as platform.env_bytes does: the UTF-8 bytes of each
    # name and each value, summed over all variables, with no `=` or
    # separators, against 1,500 and 2,500 bytes (the stricter reading of KB).
    config = json.loads((PROJECT / "agentcore" / "agentcore.json").read_text())

    for runtime in config["runtimes"]:
        pairs = [(variable["name"], variable["value"]) for variable in runtime.get("envVars", [])]
        used = platform_script.env_bytes(pairs)
        budget = platform_script.V2_ENV_BUDGET[runtime["build"]]
        assert used <= budget, f"{runtime['name']}: {used} bytes of environment, V2 allows {budget}"
        assert budget == {"CodeZip": 1500, "Container": 2500}[runtime["build"]]
