"""The session-binding endpoint's settings: read from its environment, in this one place, once.

The endpoint is a Lambda function of its own, not the agent: it reads none
of the agent's settings (settings.py), only these, on its first request:

- SLACK_ISSUER (default https://slack.com), SLACK_CLIENT_ID, and the
  Slack app's client secret: SLACK_CLIENT_SECRET_ARN (deployed, a Secrets
  Manager secret) or SLACK_CLIENT_SECRET (on this machine);
- the consent key the agent seals links with: CONSENT_KEY_SECRET (deployed)
  or CONSENT_KEY_FILE (on this machine, the agent's file: whichever starts
  first makes it);
- where states are claimed once: USED_STATES_BUCKET + USED_STATES_PREFIX
  (deployed) or USED_STATES_DIR;
- PUBLIC_URL, the endpoint's base URL; unset, https://<the request's host>.

boto3 finds AWS (or the local servers of the tests) as the environment
says: AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_S3.
"""

import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from .used_states import UsedStates, UsedStatesInBucket, UsedStatesInFolder

DEFAULT_SLACK_ISSUER = "https://slack.com"
# The shortest consent key taken: 256 bits as hex, or a secret of as many characters.
MIN_KEY_CHARACTERS = 32


class ConfigurationError(Exception):
    """The endpoint's settings are missing or wrong; the message names the variable, in one line."""


@dataclass(frozen=True)
class Config:
    """What the endpoint needs: Slack's OIDC client, the consent key, the claimed-states store."""

    slack_issuer: str
    slack_client_id: str
    slack_client_secret: str = field(repr=False)
    consent_key: bytes = field(repr=False)
    used_states: UsedStates
    # The endpoint's own base URL (no trailing slash); None: https://<the request's host>.
    public_url: str | None = None

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> "Config":
        """SLACK_ISSUER, SLACK_CLIENT_ID, SLACK_CLIENT_SECRET(_ARN), CONSENT_KEY_SECRET|FILE,
        USED_STATES_BUCKET + USED_STATES_PREFIX | USED_STATES_DIR, PUBLIC_URL."""
        env = os.environ if env is None else env
        client_id = env.get("SLACK_CLIENT_ID", "")
        if not client_id:
            raise ConfigurationError("SLACK_CLIENT_ID is not set: the Slack app's client id")
        if env.get("SLACK_CLIENT_SECRET_ARN"):
            client_secret = _secret_string(env["SLACK_CLIENT_SECRET_ARN"])
        elif env.get("SLACK_CLIENT_SECRET"):
            client_secret = env["SLACK_CLIENT_SECRET"]
        else:
            raise ConfigurationError(
                "set SLACK_CLIENT_SECRET_ARN (deployed) or SLACK_CLIENT_SECRET (on this machine)"
            )
        if env.get("CONSENT_KEY_SECRET"):
            key = _secret_string(env["CONSENT_KEY_SECRET"]).encode()
            where = f"secret {env['CONSENT_KEY_SECRET']}"
        elif env.get("CONSENT_KEY_FILE"):
            path = Path(env["CONSENT_KEY_FILE"]).expanduser()
            key, where = read_or_make_key_file(path), f"key file {path}"
        else:
            raise ConfigurationError(
                "set CONSENT_KEY_SECRET (deployed) or CONSENT_KEY_FILE (on this machine)"
            )
        if len(key) < MIN_KEY_CHARACTERS:
            raise ConfigurationError(f"the consent key ({where}) is shorter than 32 characters")
        used: UsedStates
        if env.get("USED_STATES_BUCKET"):
            import boto3

            used = UsedStatesInBucket(
                env["USED_STATES_BUCKET"], env.get("USED_STATES_PREFIX", ""), boto3.client("s3")
            )
        elif env.get("USED_STATES_DIR"):
            used = UsedStatesInFolder(Path(env["USED_STATES_DIR"]).expanduser())
        else:
            raise ConfigurationError(
                "set USED_STATES_BUCKET (deployed) or USED_STATES_DIR (on this machine)"
            )
        return cls(
            slack_issuer=(env.get("SLACK_ISSUER") or DEFAULT_SLACK_ISSUER).rstrip("/"),
            slack_client_id=client_id,
            slack_client_secret=client_secret,
            consent_key=key,
            used_states=used,
            public_url=(env.get("PUBLIC_URL") or "").rstrip("/") or None,
        )


def _secret_string(secret_id: str) -> str:
    """A Secrets Manager secret's string (boto3 finds the service as the environment says)."""
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = boto3.client("secretsmanager").get_secret_value(SecretId=secret_id)
    except ClientError as failure:
        code = failure.response.get("Error", {}).get("Code", "an error")
        raise ConfigurationError(f"secret {secret_id} could not be read: {code}") from None
    except BotoCoreError as failure:
        raise ConfigurationError(f"secret {secret_id} could not be read: {failure}") from None
    text = answer.get("SecretString")
    if not isinstance(text, str) or not text:
        raise ConfigurationError(f"secret {secret_id} holds no SecretString")
    return text


def read_or_make_key_file(path: Path) -> bytes:
    """The key in a file of this machine, made on first use readable by its owner alone.

    The agent makes the same file the same way (runs/seal.py's FileKey):
    whichever starts first makes it, the other reads it. One that others may
    read is refused: whoever reads it can make a link the endpoint trusts.
    """
    try:
        return _read_private(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as written:
        written.write(secrets.token_hex(32))
    try:
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return _read_private(path)


def _read_private(path: Path) -> bytes:
    with path.open("rb") as file:
        mode = stat.S_IMODE(os.fstat(file.fileno()).st_mode)
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigurationError(f"the consent key file {path} is open to others: chmod 600 it")
        return file.read().strip()


def with_public_url(config: Config, url: str) -> Config:
    """The same configuration, served at url (a local server learns its port once it listens)."""
    return replace(config, public_url=url.rstrip("/"))
