"""Which threads have a run waiting, and the sweep that closes old ones: one scan of the store.

The process keeps an index of the threads whose run waits for an answer,
oldest question first, so that it can keep at most MAX_PENDING_RUNS. It
learns them from its own stops and, on a folder, from one scan of the
store, which also closes questions past the answer time and forgets old
outcomes and claims. The scan runs beside the requests, never inside one:
a person waiting in Slack never waits for every record of the store to be
read. A bucket is never scanned: its own expiry rule does this there
(docs/deploying.md), without every microVM listing the whole bucket.
"""

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from . import record
from .seal import SealKey
from .storage import RunStorage, StoreUnavailable

logger = logging.getLogger(__name__)

# How often a folder store is scanned again for expired questions and old outcomes.
SCAN_EVERY_SECONDS = 3600

# Closes a session's waiting run with an outcome, as the lifecycle records it.
Close = Callable[[str, str, record.StoredSnapshot | None], Awaitable[None]]


class WaitingIndex:
    """The threads with a waiting run, oldest question first, and the scan that finds them."""

    def __init__(self, storage: RunStorage, seal: SealKey, answer_within_seconds: float) -> None:
        self._storage = storage
        self._seal = seal
        self._answer_within = answer_within_seconds
        self._waiting: OrderedDict[str, float] = OrderedDict()
        self._scanned_at = 0.0
        self._scan: asyncio.Task[None] | None = None
        # Sessions this process changed while a scan ran: what it knows beats what was read.
        self._changed: set[str] = set()

    def asked(self, session_id: str, asked_at: float) -> None:
        self._changed.add(session_id)
        self._waiting.pop(session_id, None)
        self._waiting[session_id] = asked_at

    def settled(self, session_id: str) -> None:
        self._changed.add(session_id)
        self._waiting.pop(session_id, None)

    def beyond(self, most: int) -> list[str]:
        """The sessions past the first `most`, oldest first: the runs to drop to make room."""
        return list(self._waiting)[: max(0, len(self._waiting) - most)]

    def scan_when_due(self, close: Close) -> None:
        """Start a scan beside the current request if none ran within SCAN_EVERY_SECONDS."""
        if not self._storage.lists_everything or (self._scan and not self._scan.done()):
            return
        if time.time() - self._scanned_at < SCAN_EVERY_SECONDS:
            return
        self._scanned_at = time.time()
        self._scan = asyncio.get_running_loop().create_task(self._scanned(close))

    async def scanned(self) -> None:
        """Wait for the scan that is running, if any (the tests, and a clean shutdown)."""
        if self._scan is not None:
            await asyncio.shield(self._scan)

    async def _scanned(self, close: Close) -> None:
        try:
            await self.scan(close)
        except StoreUnavailable as unavailable:
            logger.warning("could not scan the run store: %s", unavailable)

    async def scan(self, close: Close) -> None:
        """Read every record once: index the waiting runs, close the expired, forget old ones."""
        now, found = time.time(), []
        self._changed = set()
        seal = await self._seal.key()
        for key in await self._storage.list("threads/"):
            stored = await self._storage.read(key)
            session_id = record.session_of(key)
            try:
                thread = record.parse(stored, session_id, seal) if stored is not None else None
            except record.DamagedRecord:
                continue  # judged, and reported, when its thread next asks for it
            if isinstance(thread, record.Waiting):
                if now - thread.asked_at > self._answer_within:
                    await close(session_id, "expired", thread.snapshot)
                else:
                    found.append((thread.asked_at, session_id))
            elif (
                isinstance(thread, record.Settled)
                and thread.snapshot is None  # an old outcome; never a conversation
                and thread.outcome
                and now - thread.at > self._answer_within
            ):
                await self._storage.delete(key)
        for key in await self._storage.list("claims/"):
            stored = await self._storage.read(key)
            at = record.claimed_at(stored) if stored is not None else None
            if at is not None and now - at > self._answer_within:
                await self._storage.delete(key)
        found = [(at, session) for at, session in found if session not in self._changed]
        merged = sorted([*found, *((at, session) for session, at in self._waiting.items())])
        self._waiting = OrderedDict((session, at) for at, session in merged)
