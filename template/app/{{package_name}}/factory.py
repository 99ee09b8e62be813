"""The app, built from the settings: the one place that reads yours/ and assembles the rest.

main.py calls `app_from_environment()` and AgentCore serves what it returns.
Building the app reads your tools, prompt, MCP servers and model options,
checks them with the settings, and wires the wire, the runs, the gate and
the platform together; nothing else runs before the first request. What it
builds is the same in every instance AgentCore V2 restores from its
snapshot: no randomness, no identity, no connection (platform/restore.py).
Tests build apps with the settings and parts they need (`create_app`).
"""

import atexit
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from bedrock_agentcore.runtime import BedrockAgentCoreApp, RequestContext
from bedrock_agentcore.runtime.models import SESSION_HEADER
from starlette.datastructures import Headers
from starlette.types import Scope
from strands import Agent
from strands.models import Model

from .accounting.budgets import Accounting
from .accounting.totals import totals_for
from .accounting.usage import Prices
from .acting.user_tokens import UserTokens
from .agent import build_agent
from .gate.audit import record_turned_away
from .gate.consent import hand_consent_to_gate
from .gate.registry import Registry, ServingRegistry
from .gate.run_limits import TurnCaps
from .memory.per_user import UserMemory
from .model.api_key import workload_token_of
from .model.providers import check_provider, model_api_key, shared_model, warm_model
from .platform.aws_session import AwsSession
from .platform.caller import caller_of
from .platform.local_only import LocalOnly
from .platform.logs import log_json_lines, request_id, session_id
from .platform.restore import FreshRandomness
from .platform.tracing import start_tracing
from .platform.warmup import WARMUP_PATH, warmup_endpoint
from .runs.seal import open_seal_key
from .runs.storage import open_run_storage
from .runs.stored_runs import StoredRuns
from .settings import AGENT_NAME, USE_MCP, ConfigurationError, Settings
from .tools.left_out import LeftOutLibrary, explained
from .tools.mcp import McpServerError, McpServers
from .turns.conversations import LOCAL_SESSION, Conversations
from .wire.events import error_event
from .wire.nesting import NestingLimit
from .wire.request_size import RequestSizeLimit

logger = logging.getLogger(__name__)


def app_from_environment() -> BedrockAgentCoreApp:
    """The app for this process's environment, or a one-line exit that says what is wrong.

    Logging is set up at LOG_LEVEL before anything else is built. A bad
    setting, a missing key or extra, or a tool that would prompt on
    standard input is a configuration error: the process refuses to serve
    rather than fail in every thread, and a traceback would bury the reason.
    """
    try:
        settings = Settings.from_environment()
        log_json_lines(settings.log_level)
        return create_app(settings)
    except ConfigurationError as wrong:
        raise SystemExit(f"{AGENT_NAME} cannot start: {wrong}") from None


def create_app(
    settings: Settings,
    *,
    registry: Registry | None = None,
    new_model: Callable[[], Model] | None = None,
    new_agent: Callable[[Model], Agent] | None = None,
    store: StoredRuns | None = None,
) -> BedrockAgentCoreApp:
    """An app that serves POST /invocations, GET /ping and POST /warmup with these settings.

    The keywords replace one part each, for tests: the registry (yours/tools
    and, with USE_MCP, your MCP servers), the model (the provider the
    settings name, built on the first request), the agent, and the store.
    """
    check_provider(settings)
    served = registry_of_yours(settings) if registry is None else ServingRegistry(registry)
    hand_consent_to_gate(served)
    caps = TurnCaps(settings.max_model_calls_per_turn, settings.max_tool_calls_per_turn)
    # One boto3 session for every AWS client of this app (platform/aws_session.py).
    aws = AwsSession()
    # Deployed with Anthropic or OpenAI: the key's source in AgentCore Identity.
    api_key = model_api_key(settings, aws)
    model = new_model or shared_model(settings, model_options_of_yours(), api_key, aws)
    agent = new_agent or agent_of_yours(served, caps)
    store = store or stored_runs(settings, aws)
    conversations = Conversations(
        model,
        agent,
        served,
        store,
        caps,
        on_agentcore=settings.on_agentcore,
        approvers=settings.approvers,
        memory=UserMemory(settings.memory_id, aws) if settings.memory_id else None,
        api_key=api_key,
        accounting=accounting_of(settings, store),
        # The starter's own tokens, for tools acting as them: fetched per call, never kept.
        user_tokens=UserTokens(settings, aws),
    )
    start_tracing(settings)

    app = BedrockAgentCoreApp()
    app.state.settings = settings
    app.state.registry = served
    app.state.run_store = store.storage.describe()
    app.state.model_api_key = api_key
    # The app's one AWS session: every call it makes to AWS, which the tests record.
    app.state.aws = aws
    unread = audit_unread(settings)
    # Inner to the size limit, so it measures only a body of a size Welt sends.
    app.add_middleware(NestingLimit, on_refused=unread)
    app.add_middleware(RequestSizeLimit, max_bytes=settings.max_request_bytes, on_refused=unread)
    if not settings.on_agentcore:
        # Outer to the size limit, so a web page's request is refused unread.
        # On AgentCore the service's front door decides who may call.
        app.add_middleware(LocalOnly)
    # Added last, so outermost: `random` is reseeded before anything in a
    # request draws from it, in every instance restored from a V2 snapshot.
    app.add_middleware(FreshRandomness)
    # The path AgentCore V2's build hook posts to before it snapshots the agent.
    warm = warm_model(settings, model)  # never the key: no request, no token, before the snapshot
    app.add_route(WARMUP_PATH, warmup_endpoint(served, warm, agent, caps), methods=["POST"])

    @app.entrypoint
    async def invoke(payload: object, context: RequestContext) -> AsyncIterator[dict[str, Any]]:
        """Stream Welt's renderable events for one request of one Slack thread."""
        session_id.set(context.session_id)
        request_id.set(getattr(context, "request_id", None))
        # Read per request, never kept: every V2 instance shares module scope.
        headers = context.request.headers if context.request else None
        caller = caller_of(headers, settings)
        token = workload_token_of(headers)
        try:
            await served.start_servers()  # the MCP servers, on this process's first request
        except McpServerError as failed:
            conversations.turned_away(payload, context.session_id, caller, str(failed))
            yield error_event(str(failed))
            return
        async for event in conversations.respond(payload, context.session_id, caller, token):
            yield event

    return app


def audit_unread(settings: Settings) -> Callable[[Scope, str], None]:
    """One audit line for each POST /invocations refused before it was read (too large, too deep).

    Nothing of such a body is parsed, so whether it carried answers is
    unknown: the line says who sent it and that it went unread.
    """

    def record(scope: Scope, refusal: str) -> None:
        if scope.get("path") != "/invocations":
            return
        headers = Headers(scope=scope)
        caller = caller_of(headers, settings)
        record_turned_away(
            replayed=False,
            reason=refusal,
            sender=caller.id if caller else None,
            answered=None,
            session=headers.get(SESSION_HEADER) or LOCAL_SESSION,
            run=None,
        )

    return record


def stored_runs(settings: Settings, aws: AwsSession | None = None) -> StoredRuns:
    """The run store the settings name, with their time limit and room."""
    return StoredRuns(
        open_run_storage(settings, aws),
        open_seal_key(settings, aws),
        keeps_history=settings.keeps_history,
        answer_within_days=settings.answer_within_days,
        max_waiting=settings.max_pending_runs,
    )


def accounting_of(settings: Settings, store: StoredRuns) -> Accounting:
    """Usage lines priced with yours/model_prices.py; budgets kept beside the store's runs."""
    from .yours.model_prices import MODEL_PRICES

    totals = totals_for(store.storage, store.seal)
    accounting = Accounting(settings, Prices(MODEL_PRICES), totals)
    budgets = accounting.describe()
    if budgets:
        logger.info(budgets)
    return accounting


def registry_of_yours(settings: Settings) -> ServingRegistry:
    """TOOLS from yours/tools/__init__.py and, with USE_MCP, the servers of yours/mcp_servers.py.

    The servers start on the first request (ServingRegistry.start_servers),
    once per process, and stop when it exits. MCP_SERVERS=off starts none:
    the tests set it, so that they never reach your servers.
    """
    try:
        from .yours.tools import TOOLS
    except ModuleNotFoundError as missing:
        error = explained(missing, "yours/tools (or a module it imports)")
        if isinstance(error, LeftOutLibrary):  # a setting of pyproject.toml, not a bug
            raise ConfigurationError(str(error)) from missing
        raise error from missing
    registry = Registry.of(TOOLS)
    # Where each tool is declared: an MCP server's tool may take none of these names.
    declared = dict.fromkeys(
        (row.name for row in registry.rows), "a tool in TOOLS (yours/tools/__init__.py)"
    )
    if settings.model_provider == "rehearsal":  # every kind of question, with no model
        from .model.rehearsal_tools import ROWS

        registry = registry.with_rows(*ROWS)
        declared.update(
            dict.fromkeys((row.name for row in ROWS), "a rehearsal tool (model/rehearsal_tools.py)")
        )
    if not USE_MCP:
        return ServingRegistry(registry)
    from .yours.mcp_servers import MCP_DECISIONS, MCP_SERVERS

    # Checks the list, and its decisions against the tools declared, before any server starts.
    servers = McpServers(MCP_SERVERS, MCP_DECISIONS, declared)
    if not settings.mcp_servers or not MCP_SERVERS:
        return ServingRegistry(registry)
    atexit.register(servers.stop)
    return ServingRegistry(registry, servers)


def agent_of_yours(registry: Registry, caps: TurnCaps) -> Callable[[Model], Agent]:
    """Agents with your prompt, for the idle-agent pool (turns/idle_agents.py)."""
    from .yours.prompt import SYSTEM_PROMPT

    return lambda model: build_agent(model, registry, system_prompt=SYSTEM_PROMPT, caps=caps)


def model_options_of_yours() -> dict[str, dict[str, Any]]:
    from .yours.model_options import MODEL_OPTIONS

    return MODEL_OPTIONS


def serve(app: BedrockAgentCoreApp) -> None:
    """Serve on localhost for Welt's local mode (`make serve`), on the settings' port."""
    settings: Settings = app.state.settings
    logger.info("Runs waiting for an answer are kept in the %s", app.state.run_store)
    if settings.memory_id:
        logger.info("Each Slack user's memory is AgentCore Memory %s", settings.memory_id)
    logger.info(
        "Serving on http://localhost:%d for Welt's local mode (POST /invocations, GET /ping)",
        settings.port,
    )
    app.run(port=settings.port)
