"""What every environment's runtime is given: its variables, storage and lifetime.

This is the one place these live. agentcore/agentcore.json repeats them for
the AgentCore CLI's `agentcore dev`, and a test fails when the two differ.
"""

from . import project
from .settings import Environment

PORT = 8080
# The path the app serves for V2's build hook (app/<package>/warmup.py); a
# test checks the two agree.
WARMUP_PATH = "/warmup"
SESSION_STORAGE_MOUNT = "/mnt/sessions"
# AgentCore's default idle timeout, and the longest lifetime it allows.
IDLE_TIMEOUT_SECONDS = 900
MAX_LIFETIME_SECONDS = 28800
# How long a question stays answerable (the app's ANSWER_WITHIN_DAYS): the
# stored runs' bucket keeps objects one day longer, then expires them.
ANSWER_WITHIN_DAYS = 7

# Where the memory's two long-term strategies, user preferences and semantic
# facts, extract into, per actor (the verified Slack user). The app reads
# the same namespaces (app/<package>/memory/per_user.py), which a test
# checks. Two strategies, so a message costs one event and two retrievals
# (docs/patterns/memory.md says what that costs).
MEMORY_NAMESPACES = ("/users/{actorId}/preferences/", "/users/{actorId}/facts/")
# How long the raw events (each turn's message and reply) are kept; what the
# strategies extracted from them stays until deleted.
MEMORY_EVENT_DAYS = 30
# The longest memory id AgentCore makes, for the environment's byte budget:
# the id is only known once the stack creates the memory.
MEMORY_ID_BYTES = 111
# The longest ARN of the secret that seals stored runs (RUN_KEY_SECRET),
# likewise known only once the stack creates it: arn:aws-us-gov:, the
# longest Region, an account, and a name the CDK makes of up to 64
# characters with Secrets Manager's seven-character suffix.
RUN_KEY_SECRET_BYTES = 140
# With user tokens, the stack also tells the runtime the consent key's
# secret (CONSENT_KEY_SECRET, an ARN as long as RUN_KEY_SECRET's) and the
# session-binding endpoint's URL (CONSENT_ENDPOINT_URL), a Lambda function
# URL: https://, 32 characters, .lambda-url., the longest Region, .on.aws.
CONSENT_KEY_SECRET_BYTES = RUN_KEY_SECRET_BYTES
CONSENT_ENDPOINT_URL_BYTES = 80

# The providers whose key the stack keeps in AgentCore Identity: the runtime
# fetches it per process with a request's workload access token
# (app/<package>/model/api_key.py), never from its environment.
API_KEY_PROVIDERS = ("anthropic", "openai")

# The named endpoint Welt invokes (its AGENT_QUALIFIER). Each deploy points
# it at the version that deploy made; `make rollback` at the one before.
LIVE_ENDPOINT = "live"

# Platform V2 allows 1.5 KB of environment variables for a CodeZip runtime
# and 2.5 KB for a container; V1 allows 4 KB. Counted as name plus value.
ENV_BUDGET_BYTES = {"V2": 1536, "V1": 4096}

# The CLI runs a CodeZip runtime under OpenTelemetry's launcher, and so does
# this stack: AgentCore's Observability reads what the distro exports.
ENTRY_POINT = ["opentelemetry-instrument", "main.py"]

TELEMETRY = {
    # Instrumentations whose spans are noise here: every MCP message, every
    # thread start, and log records already sent as log lines.
    "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "aws_mcp,threading,logging",
    # AgentCore polls /ping all session long; each poll would be a trace.
    "OTEL_PYTHON_EXCLUDED_URLS": "/ping",
}


def needs_api_key() -> bool:
    """Whether the model is called with an API key (Anthropic, OpenAI) rather than the role."""
    return project.MODEL_PROVIDER in API_KEY_PROVIDERS


def platform_version() -> str:
    """V2 for CodeZip (a snapshot-safe base); V1 for a Container, whose OpenSSL is not."""
    return "V2" if project.DEPLOY_BUILD == "CodeZip" else "V1"


def environment_variables(environment: Environment) -> dict[str, str]:
    """The runtime's variables; the model is always named, never the Strands default."""
    variables = {
        "MODEL_PROVIDER": project.MODEL_PROVIDER,
        "MODEL_ID": environment.model_id,
        "ANSWER_WITHIN_DAYS": str(ANSWER_WITHIN_DAYS),
        # The caller is then only who AgentCore says it is (platform/caller.py).
        "ON_AGENTCORE": "true",
    }
    if needs_api_key():
        # The provider's name, never the key: the runtime fetches the key from it.
        variables["MODEL_API_KEY_PROVIDER"] = environment.model_key_provider
    if project.RUN_STORE == "s3":
        assert environment.state_bucket is not None  # settings.py requires it with s3
        variables["RUN_STORE"] = "s3"
        variables["STATE_BUCKET"] = environment.state_bucket
        variables["STATE_PREFIX"] = f"{project.PROJECT_NAME}/"
    else:
        variables["SESSION_STORAGE_DIR"] = SESSION_STORAGE_MOUNT
    if environment.approvers:
        variables["APPROVERS"] = ",".join(environment.approvers)
    # Budgets only as the environment sets them: each costs the variables' bytes.
    if environment.thread_budget_tokens is not None:
        variables["THREAD_BUDGET_TOKENS"] = str(environment.thread_budget_tokens)
    if environment.thread_budget_usd is not None:
        variables["THREAD_BUDGET_USD"] = str(environment.thread_budget_usd)
    if environment.user_daily_budget_tokens is not None:
        variables["USER_DAILY_BUDGET_TOKENS"] = str(environment.user_daily_budget_tokens)
    if environment.user_daily_budget_usd is not None:
        variables["USER_DAILY_BUDGET_USD"] = str(environment.user_daily_budget_usd)
    if environment.budget_exempt:
        variables["BUDGET_EXEMPT"] = ",".join(environment.budget_exempt)
    if environment.max_tokens_per_turn is not None:
        variables["MAX_TOKENS_PER_TURN"] = str(environment.max_tokens_per_turn)
    if environment.log_level is not None:
        variables["LOG_LEVEL"] = environment.log_level
    if environment.user_tokens:
        # Each tool's provider name and the Identity credential provider the
        # stack made for it; the secrets stay in Identity and Secrets Manager.
        variables["USER_TOKEN_PROVIDERS"] = ",".join(
            f"{provider.name}={environment.token_provider_name(provider)}"
            for provider in environment.user_tokens
        )
    return {**variables, **TELEMETRY}


def environment_bytes(variables: dict[str, str]) -> int:
    return sum(len(name.encode()) + len(value.encode()) for name, value in variables.items())
