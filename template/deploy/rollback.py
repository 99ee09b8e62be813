"""`make rollback`: the live endpoint back to the runtime version before the one it serves.

Every deploy that changes the runtime makes a new, immutable runtime version
(1, 2, 3, ...), and points the live endpoint, which Welt invokes, at it.
A rollback is a deploy of the same stack with one difference: the endpoint
pinned to the version before (deploy/pins.py). No API call moves the
endpoint beside CloudFormation, so the next deploy moves it forward again,
and the stack never disagrees with what serves.

A rollback must change nothing else, or it would ship whatever this
checkout holds that the deployed stack does not (new code, a new model)
at the very moment something is wrong. So the synthesized stack is compared
with the deployed template, resource by resource, and a rollback from a
checkout that differs is refused, naming what differs. The key's version
is the one the deployed stack names, so a key stored since is not taken;
so are the OAuth apps' client secrets'.
"""

import json
import re
from typing import Any

from . import runtime
from .pins import Pins
from .settings import Environment

# How the credential provider's ApiKey names the key's secret version.
_KEY_VERSION = re.compile(
    r"\{\{resolve:secretsmanager:[^}]*:SecretString:[^:}]*:[^:}]*:([^:}]+)\}\}"
)
_ENDPOINT = "AWS::BedrockAgentCore::RuntimeEndpoint"
_KEY_PROVIDER = "AWS::BedrockAgentCore::ApiKeyCredentialProvider"
_OAUTH_PROVIDER = "AWS::BedrockAgentCore::OAuth2CredentialProvider"


class RollbackRefused(RuntimeError):
    """There is nothing to roll back to, or the rollback would change more than the endpoint."""


def rollback_pins(environment: Environment, outputs: dict[str, str], deployed: dict) -> Pins:
    """What the rollback deploys: the version before the live one, and the deployed key version."""
    live = outputs.get("LiveVersion")
    if live is None:
        raise RollbackRefused(
            f"stack {environment.stack_name} has no {runtime.LIVE_ENDPOINT} endpoint yet: "
            f"deploy it (make deploy ENV={environment.name}) before rolling it back"
        )
    if not live.isdigit() or int(live) < 1:
        raise RollbackRefused(
            f"stack {environment.stack_name}'s LiveVersion is {live!r}, not a runtime version"
        )
    if int(live) == 1:
        raise RollbackRefused(
            f"the {runtime.LIVE_ENDPOINT} endpoint of {environment.stack_name} serves version 1, "
            "the runtime's first: there is no earlier version to roll back to"
        )
    return Pins(
        api_key_version=deployed_key_version(deployed),
        live_version=str(int(live) - 1),
        client_secret_versions=deployed_client_secret_versions(deployed),
    )


def deployed_key_version(template: dict) -> str | None:
    """The key's secret version the deployed credential provider was made from, if any."""
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == _KEY_PROVIDER:
            found = _KEY_VERSION.search(json.dumps(resource.get("Properties", {})))
            return found.group(1) if found else None
    return None


def deployed_client_secret_versions(template: dict) -> dict[str, str]:
    """Each OAuth2 provider's client secret version, by the provider's name, as deployed."""
    versions = {}
    for resource in template.get("Resources", {}).values():
        if resource.get("Type") == _OAUTH_PROVIDER:
            properties = resource.get("Properties", {})
            found = _KEY_VERSION.search(json.dumps(properties))
            if found and isinstance(properties.get("Name"), str):
                versions[properties["Name"]] = found.group(1)
    return versions


def require_only_the_endpoint_moves(deployed: dict, synthesized: dict) -> None:
    """Refuse, naming them, the resources a rollback from this checkout would change too."""
    before, after = _declared(deployed), _declared(synthesized)
    changed = sorted(
        name for name in before.keys() | after.keys() if before.get(name) != after.get(name)
    )
    if changed:
        names = ", ".join(map(repr, changed))
        raise RollbackRefused(
            f"this checkout would change {names} as well as the endpoint: a rollback "
            "changes the endpoint alone. Check out the commit the stack was deployed from "
            "(git log, or your deploy's tag), then run make rollback again"
        )


def _declared(template: dict) -> dict[str, Any]:
    """Each resource's type and properties, the live endpoint's version left out."""
    declared = {}
    for name, resource in template.get("Resources", {}).items():
        if resource.get("Type") == "AWS::CDK::Metadata":
            continue
        properties = dict(resource.get("Properties", {}))
        if resource.get("Type") == _ENDPOINT:
            properties.pop("AgentRuntimeVersion", None)
        declared[name] = json.dumps([resource.get("Type"), properties], sort_keys=True)
    return declared
