"""What a deploy pins in the stack that an offline synth cannot know: read from AWS, then declared.

Both go into the template as plain values, so CloudFormation sees a change
exactly when one of them changes, and what runs is declared by the stack,
never set beside it:

- the version of the secret that holds the model's API key. CloudFormation
  reads a secret a template refers to only when the resource that refers
  to it changes; naming the version makes a new one (`make api-key`) a
  change, so the next deploy hands the new key to AgentCore Identity.
- likewise, the version of each OAuth app's client secret (`make
  oauth-secret`), by the name of the credential provider made from it.
- the runtime version the live endpoint serves. None means the newest, the
  one this deploy makes; `make rollback` names the one before it.

`make synth` pins neither: it needs no AWS, and writes the secret's current
version and the newest runtime version.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Pins:
    api_key_version: str | None = None
    live_version: str | None = None
    client_secret_versions: Mapping[str, str] = field(default_factory=dict)


# A synth's pins: none.
NO_PINS = Pins()
