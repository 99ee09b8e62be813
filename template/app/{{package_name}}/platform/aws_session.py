"""One boto3 session for every AWS client of an app, made on first need.

Each boto3 session loads botocore's endpoint table, service models and
endpoint rules for itself: several MiB in every microVM for each of the run
store, its seal, the model's key, memory and Bedrock, which had a session
each. One per app loads them once. botocore makes clients from a session
safely in one thread at a time (neither its loaders nor its credential
lookup are locked), and the agent makes them both in the event loop and in
worker threads, so every client is made under this holder's lock.

Per app, never at import: module scope is shared by every instance AgentCore
V2 restores from one snapshot, and a test's app must not see the
credentials an earlier app's clients found.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from boto3 import Session
    from botocore.config import Config


class AwsSession:
    """The app's boto3 session, and the lock its clients are made under."""

    def __init__(self) -> None:
        self._session: Session | None = None
        self._lock = threading.Lock()

    @contextmanager
    def making_clients(self) -> Iterator["Session"]:
        """The session, this thread's alone while it makes a client or an SDK object that does."""
        with self._lock:
            if self._session is None:
                import boto3

                self._session = boto3.Session()
            yield self._session

    def client(self, service: str, config: "Config") -> Any:
        """A new client of the service, made from the shared session."""
        with self.making_clients() as session:
            return session.client(service, config=config)

    @property
    def session(self) -> "Session":
        """The session itself, whose events the tests hook; clients come from `client`."""
        with self.making_clients() as session:
            return session
