"""Budgets: how much a thread, and a person in a day, may use before a new turn is refused.

The check comes before a turn starts, never inside it: a turn stopped
halfway would leave a tool call done and its reply unsaid, so a turn that
starts under the budget finishes, and the next is refused. A resume is
never refused: it answers a question the agent already asked, and
refusing it would leave the question open for good.

A thread's total is kept in the run store beside its record. A person's
day is counted across all their threads, so it needs a total that every
instance sees: only the S3 store has one (runs/counters.py); with the
folder store, which is one thread's session storage on AgentCore, a
person's budget cannot be kept and only the thread's applies (the start-up
log says so). Only a verified Slack user has a day to count.

If the person's total cannot be read, the turn is refused (it fails
closed): a budget that a store outage switches off is no budget. If a
finished turn cannot be added, the usage line still has it, the log says
so, and the addition is kept to be made with the person's next one.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from strands import Agent

from ..gate.answerers import STARTED_BY
from ..gate.audit import record_over_budget
from ..settings import Settings
from .counters import Counters, Tally, new_mark
from .storage import StoreUnavailable
from .usage import Prices, model_id_of, record_usage, usage_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    """One budget: the total it reads, the setting that sets it, and its size."""

    scope: str  # "thread" or "person"
    setting: str
    tokens: int = 0
    cost_micros: int = 0

    def reached(self, total: Tally) -> bool:
        if self.tokens and total.tokens >= self.tokens:
            return True
        return bool(self.cost_micros) and total.cost_micros >= self.cost_micros

    def used(self, total: Tally) -> str:
        if self.tokens:
            return f"{total.tokens:,} of {self.tokens:,} tokens"
        return f"${total.cost_micros / 1e6:,.2f} of ${self.cost_micros / 1e6:,.2f}"


def thread_key(session: str) -> str:
    return f"usage/threads/{session}.json"


def person_key(user: str, day: str) -> str:
    return f"usage/people/{day}/{user}.json"


def today() -> str:
    return datetime.now(UTC).date().isoformat()


class Accounting:
    """Logs each request's usage, and keeps and checks the budgets the settings set."""

    def __init__(self, settings: Settings, prices: Prices, counters: Counters) -> None:
        self.prices = prices
        self.counters = counters
        self.exempt = settings.budget_exempt
        self.limits = [
            limit
            for limit in (
                _limit("thread", "THREAD_BUDGET_TOKENS", settings.thread_budget_tokens, 0),
                _limit("thread", "THREAD_BUDGET_USD", 0, settings.thread_budget_usd),
                _limit("person", "USER_DAILY_BUDGET_TOKENS", settings.user_daily_budget_tokens, 0),
                _limit("person", "USER_DAILY_BUDGET_USD", 0, settings.user_daily_budget_usd),
            )
            if limit is not None
        ]
        self.per_thread = any(limit.scope == "thread" for limit in self.limits)
        self.per_person = counters.shared and any(limit.scope == "person" for limit in self.limits)
        # Additions a store outage kept from their total, made with the next one.
        self._owed: dict[str, list[tuple[Tally, str]]] = {}

    def describe(self) -> str | None:
        """The start-up log's line about budgets, or None when none is set."""
        if not self.limits:
            return None
        settings = ", ".join(limit.setting for limit in self.limits)
        if any(limit.scope == "person" for limit in self.limits) and not self.per_person:
            return (
                f"Budgets: {settings}; a person's daily budget needs RUN_STORE=s3, whose "
                "totals every instance shares: with this store only the thread's budget applies"
            )
        return f"Budgets: {settings}"

    async def refusal(self, session: str, caller: str | None) -> str | None:
        """Why a new turn may not start, in the one line the thread is told; None if it may.

        Raises StoreUnavailable when a total cannot be read: the turn must not start.
        """
        if not self.limits or (caller is not None and caller in self.exempt):
            return None
        for limit in self.limits:
            if limit.scope == "thread":
                total = await self.counters.read(thread_key(session))
            elif self.per_person and caller is not None:
                total = await self.counters.read(person_key(caller, today()))
            else:
                continue
            if limit.reached(total):
                return self._refuse(limit, total, session, caller)
        return None

    def _refuse(self, limit: Limit, total: Tally, session: str, caller: str | None) -> str:
        if limit.scope == "thread":
            resets = "never: a new thread starts from nothing"
            told = f"This thread has used its budget ({limit.used(total)}, {limit.setting})"
        else:
            midnight = datetime.combine(
                datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(), UTC
            )
            resets = f"at {midnight.isoformat(timespec='minutes')} (midnight UTC)"
            told = f"You have used your budget for today ({limit.used(total)}, {limit.setting})"
        record_over_budget(
            budget=limit.scope,
            setting=limit.setting,
            used=limit.used(total),
            resets=resets,
            sender=caller,
            session=session,
        )
        return (
            f"{told}, so this message was not run. It resets {resets}; "
            f"whoever deploys the agent can raise {limit.setting}."
        )

    async def count(self, agent: Agent, session: str, resumed: bool) -> None:
        """Log the request's usage, and add it to the totals its budgets read.

        The run's starter pays for it, resumes included: whoever answered a
        question only let the run they started go on.
        """
        try:
            await self._count(agent, session, resumed)
        except Exception:  # the reply is out: a failure to count must not fail it
            logger.exception("could not count the usage of session %s", session)

    async def _count(self, agent: Agent, session: str, resumed: bool) -> None:
        usage, model = usage_of(agent), model_id_of(agent)
        started_by = agent.state.get(STARTED_BY)
        starter = started_by if isinstance(started_by, str) else None
        cost = self.prices.cost_micros(usage, model)
        record_usage(
            kind="resume" if resumed else "turn",
            usage=usage,
            model=model,
            cost_micros=cost,
            session=session,
            started_by=starter,
        )
        amount = Tally(usage.total, cost or 0, 1)
        if self.per_thread:
            await self._add(thread_key(session), amount)
        if self.per_person and starter is not None:
            await self._add(person_key(starter, today()), amount)

    async def _add(self, key: str, amount: Tally) -> None:
        owed = [*self._owed.pop(key, []), (amount, new_mark())]
        for index, (tally, mark) in enumerate(owed):
            try:
                await self.counters.add(key, tally, mark)
            except StoreUnavailable as unavailable:
                self._owed[key] = owed[index:]
                logger.error(
                    "usage not yet added to %s (%d additions owed): %s",
                    key,
                    len(owed) - index,
                    unavailable,
                )
                return


def _limit(scope: str, setting: str, tokens: int, dollars: float) -> Limit | None:
    if not tokens and not dollars:
        return None
    return Limit(scope, setting, tokens, round(dollars * 1_000_000))
