"""Each environment's settings, read from deploy/environments.toml and checked once.

A deployment that reads a setting late fails late: halfway through a synth,
or in CloudFormation minutes later. Everything here is checked before the
stack is built, and a bad value stops the command with one line that names
the table and the key.
"""

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import project

ENVIRONMENTS = ("staging", "prod")
SETTINGS_FILE = Path(__file__).resolve().parent / "environments.toml"

# An account id AWS never issues: a fresh project synthesizes with it, and a
# deploy refuses it.
PLACEHOLDER_ACCOUNT = "000000000000"

# The retention periods CloudWatch Logs accepts, in days.
LOG_RETENTION_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557,
    2922, 3288, 3653,
)  # fmt: skip

_ACCOUNT = re.compile(r"\d{12}")
_REGION = re.compile(r"[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d")
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")


_KINDS = {str: "text in quotes", int: "a whole number"}

# The Slack users Welt verifies, as the runtime's settings read them
# (APPROVERS, BUDGET_EXEMPT): a deploy refuses what the runtime would
# refuse at start-up, after the deploy.
_SLACK_USER = re.compile(r"slack:[A-Za-z0-9_-]{1,32}:[A-Za-z0-9_]{1,32}")
_SLACK_USERS = 'a list of Slack users as Welt names them, such as ["slack:T0123ABCD:U0123ABCD"]'


# The levels the runtime's LOG_LEVEL takes, as its settings read it.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

# The OAuth providers a [<env>.user_tokens.<name>] table may name as its vendor,
# and the vendor AgentCore Identity's OAuth2 credential provider is made for:
# those CloudFormation configures with a client id and secret alone.
VENDORS = {
    "atlassian": "AtlassianOauth2",
    "github": "GithubOauth2",
    "google": "GoogleOauth2",
    "linkedin": "LinkedinOauth2",
    "microsoft": "MicrosoftOauth2",
    "salesforce": "SalesforceOauth2",
    "slack": "SlackOauth2",
}
# What a user token's table takes.
TOKEN_PROVIDER_KEYS = ("vendor", "client_id")
# A provider's name, as a tool names it and as it ends the credential
# provider's name in Identity, whose ARN takes letters, digits and hyphens.
_PROVIDER_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
_CLIENT_ID = re.compile(r"\S{1,256}")
# A Slack app's client id, which Sign in with Slack's ID tokens name as their audience.
_SLACK_CLIENT_ID = re.compile(r"\d{1,20}\.\d{1,20}")


class SettingError(ValueError):
    """A setting is missing or wrong; the message is the one line to show."""


@dataclass(frozen=True)
class TokenProvider:
    """An OAuth app the agent's tools get a person's own token from.

    Declared as [staging.user_tokens.github] (a table per environment and
    app). name is what a tool declares (`UserToken("github", ...)`); vendor one of
    VENDORS; client_id the app's, public. Its client secret is never a
    setting: `make oauth-secret` stores it in Secrets Manager.
    """

    name: str
    vendor: str
    client_id: str


@dataclass(frozen=True)
class Environment:
    """One deployment target: where it goes and what differs from the other one."""

    name: str
    account: str
    region: str
    model_id: str
    log_retention_days: int
    github_repository: str
    state_bucket: str | None = None
    # The Slack users an APPROVERS question may be answered by (the runtime's APPROVERS).
    approvers: tuple[str, ...] = ()
    # Budgets (the runtime's THREAD_BUDGET_*, USER_DAILY_BUDGET_*, BUDGET_EXEMPT);
    # None sets none (docs/patterns/usage-and-budgets.md).
    thread_budget_tokens: int | None = None
    thread_budget_usd: float | None = None
    user_daily_budget_tokens: int | None = None
    user_daily_budget_usd: float | None = None
    budget_exempt: tuple[str, ...] = ()
    # The share of a budget each new turn holds while it runs (MAX_TOKENS_PER_TURN).
    max_tokens_per_turn: int | None = None
    # The runtime's LOG_LEVEL; None leaves the agent's default, INFO.
    log_level: str | None = None
    # The OAuth apps whose tokens tools act with, as the person who asked
    # (docs/deploying.md); with any, the Slack app's client id, which signs
    # that person in at the session-binding endpoint.
    user_tokens: tuple[TokenProvider, ...] = ()
    slack_client_id: str | None = None

    @property
    def is_placeholder(self) -> bool:
        return self.account == PLACEHOLDER_ACCOUNT

    @property
    def stack_name(self) -> str:
        return f"{project.AGENT_NAME}-{self.name}"

    @property
    def runtime_name(self) -> str:
        """AgentCore's runtime name: letters, digits and underscores, so no hyphen."""
        return f"{project.AGENT_NAME}_{self.name}"

    @property
    def model_key_secret(self) -> str:
        """The Secrets Manager secret `make api-key` puts the model's key in (Anthropic, OpenAI)."""
        return f"{self.stack_name}/model-api-key"

    @property
    def model_key_provider(self) -> str:
        """The AgentCore Identity credential provider the stack makes of that secret.

        Letters, digits and hyphens: CloudFormation's schema for the
        provider's ARN takes no underscore, though the name may have one.
        """
        return f"{project.AGENT_NAME}-{self.name}-model-key"

    def token_provider_name(self, provider: TokenProvider) -> str:
        """The AgentCore Identity OAuth2 credential provider the stack makes for a user token."""
        return f"{project.AGENT_NAME}-{self.name}-{provider.name}"

    def client_secret_name(self, provider: TokenProvider) -> str:
        """The secret `make oauth-secret` puts the OAuth app's client secret in."""
        return f"{self.stack_name}/oauth-client-secret/{provider.name}"

    @property
    def slack_client_secret_name(self) -> str:
        """Where the Slack app's client secret is kept: made by the stack, filled by a make task."""
        return f"{self.stack_name}/slack-client-secret"

    def token_provider(self, name: str) -> TokenProvider:
        """The user token of that name; SettingError says which the environment declares."""
        for provider in self.user_tokens:
            if provider.name == name:
                return provider
        declared = ", ".join(provider.name for provider in self.user_tokens) or "none"
        raise SettingError(
            f"environments.toml [{self.name}] declares no user token {name!r} (it declares "
            f"{declared}): add a [{self.name}.user_tokens.{name}] table"
        )


# Keys an environment may leave out.
TOKEN_BUDGETS = ("thread_budget_tokens", "user_daily_budget_tokens", "max_tokens_per_turn")
DOLLAR_BUDGETS = ("thread_budget_usd", "user_daily_budget_usd")
OPTIONAL_KEYS = (
    "approvers",
    "thread_budget_tokens",
    "thread_budget_usd",
    "user_daily_budget_tokens",
    "user_daily_budget_usd",
    "budget_exempt",
    "max_tokens_per_turn",
    "log_level",
    "user_tokens",
    "slack_client_id",
)


def _keys() -> dict[str, type]:
    keys: dict[str, type] = {
        "account": str,
        "region": str,
        "model_id": str,
        "log_retention_days": int,
        "github_repository": str,
    }
    if project.RUN_STORE == "s3":
        keys["state_bucket"] = str
    return keys


def load_environment(name: str, path: Path = SETTINGS_FILE) -> Environment:
    """The named environment's settings, checked; SettingError names what is wrong."""
    if name not in ENVIRONMENTS:
        raise SettingError(f"ENV must be one of {', '.join(ENVIRONMENTS)} (got {name!r})")
    try:
        tables = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise SettingError(
            f"{path.name} is missing: it holds each environment's settings"
        ) from None
    except tomllib.TOMLDecodeError as broken:
        raise SettingError(f"{path.name} is not valid TOML: {broken}") from None
    table = tables.get(name)
    if not isinstance(table, dict):
        raise SettingError(f"{path.name} has no [{name}] table")
    where = f"{path.name} [{name}]"
    expected = _keys()
    unknown = sorted(set(table) - set(expected) - set(OPTIONAL_KEYS))
    if unknown:
        taken = ", ".join([*expected, *OPTIONAL_KEYS])
        raise SettingError(f"{where} has unknown keys {', '.join(unknown)}; it takes {taken}")
    for key, kind in expected.items():
        if key not in table:
            raise SettingError(f"{where} needs {key}")
        if type(table[key]) is not kind:
            raise SettingError(f"{where} {key} must be {_KINDS[kind]} (got {table[key]!r})")
    _check(where, "account", table["account"], _ACCOUNT.fullmatch(table["account"]), "12 digits")
    _check(
        where, "region", table["region"], _REGION.fullmatch(table["region"]),
        "an AWS Region such as us-east-1",
    )  # fmt: skip
    _check(
        where, "model_id", table["model_id"], _MODEL_ID.fullmatch(table["model_id"]),
        "a model id or inference profile, never empty: an empty one runs the Strands default, "
        "which changes between releases",
    )  # fmt: skip
    _check(
        where, "log_retention_days", table["log_retention_days"],
        table["log_retention_days"] in LOG_RETENTION_DAYS,
        f"one of CloudWatch's periods ({', '.join(map(str, LOG_RETENTION_DAYS[:12]))}, ...)",
    )  # fmt: skip
    _check(
        where, "github_repository", table["github_repository"],
        _REPOSITORY.fullmatch(table["github_repository"]), "owner/name",
    )  # fmt: skip
    bucket = table.get("state_bucket")
    if bucket is not None:
        valid = (
            _BUCKET.fullmatch(bucket) and ".." not in bucket and not re.fullmatch(r"[\d.]+", bucket)
        )
        _check(
            where, "state_bucket", bucket, valid,
            "an S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens",
        )  # fmt: skip
    level = table.get("log_level")
    if level is not None:
        _check(
            where, "log_level", level, isinstance(level, str) and level.upper() in LOG_LEVELS,
            f"one of {', '.join(LOG_LEVELS)} (or leave it out for INFO)",
        )  # fmt: skip
        table["log_level"] = level.upper()
    approvers = _slack_users(where, "approvers", table.pop("approvers", []))
    budget_exempt = _slack_users(where, "budget_exempt", table.pop("budget_exempt", []))
    _check_budgets(where, table)
    user_tokens = _user_tokens(path.name, name, table.pop("user_tokens", {}))
    _check_slack_client_id(where, name, table.get("slack_client_id"), user_tokens)
    return Environment(
        name=name,
        approvers=approvers,
        budget_exempt=budget_exempt,
        user_tokens=user_tokens,
        **table,
    )


def _user_tokens(file: str, environment: str, tables: object) -> tuple[TokenProvider, ...]:
    """Each [<env>.user_tokens.<name>] table, checked."""
    opened = f"{file} [{environment}"
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        raise SettingError(
            f"{opened}] user_tokens must be tables, one per provider, such as "
            f"[{environment}.user_tokens.github] (got {tables!r})"
        )
    providers = []
    for name, table in tables.items():
        if not _PROVIDER_NAME.fullmatch(name):
            raise SettingError(
                f"{opened}.user_tokens] names a provider {name!r}: a name is a lowercase letter, "
                "then up to 31 lowercase letters, digits or hyphens"
            )
        where = f"{opened}.user_tokens.{name}]"
        unknown = sorted(set(table) - set(TOKEN_PROVIDER_KEYS))
        if unknown:
            taken = ", ".join(TOKEN_PROVIDER_KEYS)
            raise SettingError(f"{where} has unknown keys {', '.join(unknown)}; it takes {taken}")
        for key in TOKEN_PROVIDER_KEYS:
            if key not in table:
                raise SettingError(f"{where} needs {key}")
        vendor, client_id = table["vendor"], table["client_id"]
        _check(
            where, "vendor", vendor, isinstance(vendor, str) and vendor in VENDORS,
            f"one of {', '.join(VENDORS)}",
        )  # fmt: skip
        _check(
            where, "client_id", client_id,
            isinstance(client_id, str) and _CLIENT_ID.fullmatch(client_id),
            "the OAuth app's client id, in quotes, without spaces (its secret goes in with "
            "make oauth-secret, never here)",
        )  # fmt: skip
        providers.append(TokenProvider(name=name, vendor=vendor, client_id=client_id))
    return tuple(providers)


def _check_slack_client_id(
    where: str, name: str, client_id: object, user_tokens: tuple[TokenProvider, ...]
) -> None:
    """Sign in with Slack at the consent endpoint needs the Slack app's client id, nothing else."""
    if user_tokens and client_id is None:
        raise SettingError(
            f"{where} needs slack_client_id with user_tokens: the consent endpoint signs people "
            "in with Slack, as the Slack app whose client id it is (Basic Information, App "
            "Credentials)"
        )
    if client_id is not None and not user_tokens:
        raise SettingError(
            f"{where} slack_client_id is used only with user tokens: declare one "
            f"([{name}.user_tokens.<name>]) or leave slack_client_id out"
        )
    if client_id is not None:
        _check(
            where, "slack_client_id", client_id,
            isinstance(client_id, str) and _SLACK_CLIENT_ID.fullmatch(client_id),
            "the Slack app's client id, digits, a dot and digits, in quotes",
        )  # fmt: skip


def _slack_users(where: str, key: str, users: object) -> tuple[str, ...]:
    if not (
        isinstance(users, list)
        and all(isinstance(user, str) and _SLACK_USER.fullmatch(user) for user in users)
    ):
        raise SettingError(f"{where} {key} must be {_SLACK_USERS} (got {users!r})")
    return tuple(users)


def _check_budgets(where: str, table: dict) -> None:
    """A budget is above 0, or left out: a 0 would read as "nothing may be spent" but set none."""
    for key in TOKEN_BUDGETS:
        if key in table:
            value = table[key]
            _check(
                where, key, value, type(value) is int and value > 0,
                "a whole number of tokens above 0 (leave it out for none)",
            )  # fmt: skip
    for key in DOLLAR_BUDGETS:
        if key in table:
            value = table[key]
            _check(
                where, key, value,
                type(value) in (int, float) and 0 < value < float("inf"),
                "a number of US dollars above 0, such as 2.5 (leave it out for no budget)",
            )  # fmt: skip
    daily = next((key for key in table if key.startswith("user_daily_budget_")), None)
    if daily is not None and project.RUN_STORE != "s3":
        raise SettingError(
            f"{where} {daily} needs run_store=s3: a person's day is counted across their "
            "threads in the bucket every instance shares, and session storage is one thread's, "
            "so the runtime would ignore it; thread_budget_tokens and thread_budget_usd work "
            "with either store"
        )


def _check(where: str, key: str, value: object, valid: object, accepts: str) -> None:
    if not valid:
        raise SettingError(f"{where} {key} must be {accepts} (got {value!r})")
