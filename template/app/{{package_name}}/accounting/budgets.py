"""Budgets: a turn holds part of what is left before it starts, and settles what it used at its end.

Checking a budget before a turn and adding to it after lets every turn that
starts at once spend what is left: ten threads started together by one
person each saw the same total. So a turn that may start first holds its
share of the thread's and its starter's totals, with the same conditional
writes that add to them: what is left less what the turns running hold. A
turn's share is MAX_TOKENS_PER_TURN, or what is left if less, and the turn
runs with Strands' own `total_tokens` limit at its share. Strands checks
that limit between model calls, so turns that start together use at most
the budget plus, for each, the one model call that took it past its share.
At its end the turn settles: its hold gives way to what it used, in one
write. A hold of a turn that never ends (a killed process) lapses when no
request could still be running.

A resume is never refused and holds nothing: it answers a question the
agent already asked, and refusing it would leave the question open for
good; what it uses is added to its starter's totals all the same. A
thread's total is kept in the run store beside its record; a person's day
is counted across all their threads, so it needs a total every instance
sees, which only the S3 store has; with the folder store only the
thread's budget applies (the start-up log says so). Only a verified Slack
user has a day to count.

If a total cannot be read or held, or is damaged, the turn is refused (it
fails closed): a budget that a store outage switches off is no budget. If
a finished request cannot be added, its usage line still has it, the log
says so, and the addition is made with the next one.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial

from strands import Agent

from ..gate.answerers import STARTED_BY
from ..gate.audit import record_over_budget
from ..settings import Settings
from .totals import HOLD_SECONDS, DamagedTotal, Held, Hold, Tally, Totals, new_mark
from .usage import Prices, model_id_of, record_usage, usage_of

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    """One budget: the total it reads, the setting that sets it, and its size."""

    scope: str  # "thread" or "person"
    setting: str
    tokens: int = 0
    cost_micros: int = 0

    def left(self, total: Tally) -> int:
        """What is left of it, in its own unit, once the turns running have their shares."""
        if self.tokens:
            return self.tokens - total.tokens - total.held_tokens
        return self.cost_micros - total.cost_micros - total.held_cost_micros

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


@dataclass
class Admission:
    """A turn let in: the holds it took, and the tokens it may use (None: no budget binds it)."""

    holds: list[Held] = field(default_factory=list)
    tokens: int | None = None


class OverBudget(Exception):
    """A new turn a budget does not let in; the message is what the thread is told."""


class _Spent(Exception):
    """Raised inside a hold's decision: this limit has nothing left for another turn."""

    def __init__(self, limit: Limit, total: Tally) -> None:
        super().__init__(limit.setting)
        self.limit, self.total = limit, total


class Accounting:
    """Logs each request's usage, and holds and settles the budgets the settings set."""

    def __init__(self, settings: Settings, prices: Prices, totals: Totals) -> None:
        self.prices = prices
        self.totals = totals
        self.exempt = settings.budget_exempt
        self.turn_tokens = settings.max_tokens_per_turn
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
        self.per_person = totals.shared and any(limit.scope == "person" for limit in self.limits)
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
        return f"Budgets: {settings}; each turn holds up to {self.turn_tokens:,} tokens of them"

    async def admit(self, session: str, caller: str | None, model: Callable[[], str]) -> Admission:
        """The holds a new turn takes before it starts; OverBudget says why it may not start.

        Raises StoreUnavailable (DamagedTotal among them) when a total cannot
        be read or held: the turn must not start.
        """
        admission = Admission()
        if not self.limits or (caller is not None and caller in self.exempt):
            return admission
        keys = [thread_key(session)] if self.per_thread else []
        if self.per_person and caller is not None:
            keys.append(person_key(caller, today()))
        try:
            for key in keys:
                limits = [limit for limit in self.limits if key.startswith(_prefix(limit))]
                decide = partial(self._share, limits=limits, model=model)
                admission.holds.append(await self.totals.hold(key, decide))
        except _Spent as spent:
            await self.release(admission)
            told = self._refuse(spent.limit, spent.total, session, caller)
            raise OverBudget(told) from None
        except DamagedTotal as damaged:
            logger.error(
                "%s", damaged
            )  # whoever runs the agent must hear of it, not only the thread
            await self.release(admission)
            raise
        except BaseException:
            await self.release(admission)
            raise
        admission.tokens = min((held.hold.tokens for held in admission.holds), default=None)
        return admission

    def _share(self, total: Tally, *, limits: list[Limit], model: Callable[[], str]) -> Hold:
        """What a turn may hold of this total: its share, or what is left if less."""
        model_id = model() if any(limit.cost_micros for limit in limits) else ""
        tokens, cost = self.turn_tokens, self.prices.most_micros(self.turn_tokens, model_id)
        for limit in limits:
            left = limit.left(total)
            if left <= 0:
                raise _Spent(limit, total)
            if limit.tokens:
                tokens = min(tokens, left)
            elif cost is not None:
                cost = min(cost, left)
                tokens = min(tokens, self.prices.tokens_for(cost, model_id))
        return Hold(tokens, cost or 0, time.time() + HOLD_SECONDS)

    async def release(self, admission: Admission) -> None:
        """End the holds of a turn that did not run: it used nothing."""
        for held in admission.holds:
            await self._add(held.key, Tally(), held)
        admission.holds.clear()

    def _refuse(self, limit: Limit, total: Tally, session: str, caller: str | None) -> str:
        whose = "This thread's budget" if limit.scope == "thread" else "Your budget for today"
        if limit.left(Tally(total.tokens, total.cost_micros)) > 0:  # the turns running hold it
            resets = "when the turns running now end"
            told = (
                f"{whose} ({limit.used(total)} used, {limit.setting}) is held by "
                f"{len(total.holds)} turn(s) still running, so this message was not run. "
                "Send it again once they end"
            )
        elif limit.scope == "thread":
            resets = "never: a new thread starts from nothing"
            told = (
                f"This thread has used its budget ({limit.used(total)}, {limit.setting}), so "
                f"this message was not run. It resets {resets}"
            )
        else:
            midnight = datetime.combine(
                datetime.now(UTC).date() + timedelta(days=1), datetime.min.time(), UTC
            )
            resets = f"at {midnight.isoformat(timespec='minutes')} (midnight UTC)"
            told = (
                f"You have used your budget for today ({limit.used(total)}, {limit.setting}), "
                f"so this message was not run. It resets {resets}"
            )
        record_over_budget(
            budget=limit.scope,
            setting=limit.setting,
            used=limit.used(total),
            resets=resets,
            sender=caller,
            session=session,
        )
        return f"{told}; whoever deploys the agent can raise {limit.setting}."

    async def count(
        self, agent: Agent, session: str, resumed: bool, admission: Admission | None = None
    ) -> None:
        """Log the request's usage, and add it to the totals its budgets read, ending its holds.

        The run's starter pays for it, resumes included: whoever answered a
        question only let the run they started go on.
        """
        try:
            await self._count(agent, session, resumed, admission or Admission())
        except Exception:  # the reply is out: a failure to count must not fail it
            logger.exception("could not count the usage of session %s", session)

    async def _count(self, agent: Agent, session: str, resumed: bool, admission: Admission) -> None:
        usage, model = usage_of(agent), model_id_of(agent.model)
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
        held = {held.key: held for held in admission.holds}
        keys = [thread_key(session)] if self.per_thread else []
        if self.per_person and starter is not None:
            keys.append(person_key(starter, today()))
        for key in keys:
            await self._add(key, amount, held.pop(key, None))
        for left in held.values():  # a hold on a total this request no longer counts to
            await self._add(left.key, Tally(), left)

    async def _add(self, key: str, amount: Tally, held: Held | None) -> None:
        """Add to a total, ending the hold this request took on it (by the hold's mark)."""
        owed = [*self._owed.pop(key, []), (amount, held.mark if held else new_mark())]
        for index, (tally, mark) in enumerate(owed):
            try:
                await self.totals.add(key, tally, mark, held)
            except Exception as failure:  # StoreUnavailable, DamagedTotal: kept for the next
                self._owed[key] = owed[index:]
                logger.error(
                    "usage not yet added to %s (%d additions owed): %s",
                    key,
                    len(owed) - index,
                    failure,
                )
                return


def _prefix(limit: Limit) -> str:
    return "usage/threads/" if limit.scope == "thread" else "usage/people/"


def _limit(scope: str, setting: str, tokens: int, dollars: float) -> Limit | None:
    if not tokens and not dollars:
        return None
    return Limit(scope, setting, tokens, round(dollars * 1_000_000))
