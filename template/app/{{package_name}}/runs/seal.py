"""The key that seals every stored record, so a record changed by anyone but the agent is refused.

Whoever can write the run store could otherwise make the agent act on a
record it never wrote: a waiting run copied into another thread, another
starter, an input other than the one the human approved. Each record
therefore carries an HMAC-SHA256 over all it holds (record.py), with a key
that never sits in the store:

- deployed, a Secrets Manager secret that the stack creates and that only
  the runtime's role may read (RUN_KEY_SECRET names it);
- on this machine, a file beside the local state, made on first use and
  readable by its owner alone (a key file that other users may read or
  change is refused: whoever reads it can seal a record the agent trusts);
- for the warm-up turn, a key of this process alone, which nothing outlives.

The key is read on the first request that needs it and kept in the
process, never at import: on AgentCore V2 every instance is restored from
one snapshot, and nothing is fetched before it is taken.
docs/patterns/stored-runs.md states who can write each store, and what
they can and cannot make the agent do.
"""

import asyncio
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..platform.aws_errors import aws_reason, from_aws_client
from ..platform.aws_session import AwsSession
from ..platform.logs import hide_in_logs
from ..settings import ConfigurationError, Settings
from .storage import StoreUnavailable

if TYPE_CHECKING:
    from boto3 import Session

# The shortest key taken: 256 bits as hex, or a secret of as many characters.
MIN_KEY_CHARACTERS = 32

# The permission bits that open a key file to anyone but its owner.
_OPEN_TO_OTHERS = stat.S_IRWXG | stat.S_IRWXO


@dataclass(frozen=True)
class KeyUse:
    """What a key seals, as its messages name it: the same classes read every key of the agent."""

    name: str  # the key, as a message opens with it
    seals: str  # what it seals, as "the key file that ..." ends
    risk: str  # what whoever reads it could do
    lost: str  # what a new key costs


RUNS = KeyUse(
    "The run store's seal key",
    "seals stored runs",
    "can seal a run the agent would resume",
    "runs waiting for an answer are then lost",
)


class KeyFileNotPrivate(ConfigurationError):
    """The key file that seals stored runs may be read or changed by other users of this machine.

    Anyone who reads the key can seal a record the agent then trusts, so
    the agent refuses to start with it rather than warn and go on.
    """


class SealKey:
    """Where the key comes from, and the key, once read."""

    def __init__(self, use: KeyUse = RUNS) -> None:
        self.use = use
        self._key: bytes | None = None
        self._reading: asyncio.Lock | None = None
        self._reading_now = threading.Lock()

    def describe(self) -> str:
        raise NotImplementedError

    async def key(self) -> bytes:
        """The key, read once; StoreUnavailable says in one line why it could not be had.

        Requests (and the store's scan) that need it at the same moment
        wait for one read rather than each making their own.
        """
        if self._key is None:
            self._reading = self._reading or asyncio.Lock()
            async with self._reading:
                if self._key is None:
                    read = await asyncio.to_thread(self._read)
                    self._key = _long_enough(read, self.describe(), self.use)
        return self._key

    def key_now(self) -> bytes:
        """The key, read once, for code that runs in a worker thread (a tool): it blocks.

        StoreUnavailable says in one line why it could not be had.
        """
        with self._reading_now:
            if self._key is None:
                self._key = _long_enough(self._read(), self.describe(), self.use)
        return self._key

    def _read(self) -> bytes:
        raise NotImplementedError


class SecretKey(SealKey):
    """A Secrets Manager secret's string: deployed, the stack's, readable by the runtime alone."""

    def __init__(self, secret_id: str, aws: AwsSession | None = None, use: KeyUse = RUNS) -> None:
        super().__init__(use)
        self.secret_id = secret_id
        # The app's session; the client connects on first use.
        self.aws = aws or AwsSession()

    @property
    def session(self) -> "Session":
        """The session the key is read with, whose calls tests record."""
        return self.aws.session

    def describe(self) -> str:
        return f"secret {self.secret_id}"

    def _read(self) -> bytes:
        from botocore.config import Config

        config = Config(connect_timeout=5, read_timeout=10, user_agent_extra="welt-agent-runs")
        client = self.aws.client("secretsmanager", config)
        try:
            answer = client.get_secret_value(SecretId=self.secret_id)
        except Exception as failure:
            if not from_aws_client(failure):
                raise
            raise _unavailable(self.describe(), aws_reason(failure)[1], self.use) from failure
        finally:
            client.close()  # read once per process: nothing is left open for the next
        text = answer.get("SecretString")
        if not isinstance(text, str):
            raise _unavailable(self.describe(), "it holds no SecretString", self.use)
        hide_in_logs(text)
        return text.encode()


class FileKey(SealKey):
    """A key file of this machine, made on first use, readable by its owner alone.

    One that others may read or change is refused: when the app is built
    (KeyFileNotPrivate, the one-line exit of factory.py), and again when it
    is read, since the file may have been made, or its mode changed, since.
    The agent makes its own file 0600; one it finds open it never changes
    itself, as it cannot know who read it meanwhile: the message says what to run.
    """

    def __init__(self, path: Path, use: KeyUse = RUNS) -> None:
        super().__init__(use)
        self.path = path
        try:
            found = path.stat()
        except OSError:  # not made yet (or unreadable): the first read says which
            return
        exposed = _open_to_others(path, found, use)
        if exposed:
            raise KeyFileNotPrivate(f"The key file that {use.seals}, {path}: {exposed}")

    def describe(self) -> str:
        return f"key file {self.path}"

    def _read(self) -> bytes:
        try:
            return self._read_or_make()
        except OSError as failure:
            cause = f"{type(failure).__name__}: {failure}"
            raise _unavailable(self.describe(), cause, self.use) from None

    def _read_private(self) -> bytes:
        """The key, from a file this process has open, so the mode checked is the file's read."""
        with self.path.open("rb") as file:
            exposed = _open_to_others(self.path, os.fstat(file.fileno()), self.use)
            if exposed:
                raise _unavailable(self.describe(), exposed, self.use)
            return file.read().strip()

    def _read_or_make(self) -> bytes:
        try:
            return self._read_private()
        except FileNotFoundError:
            pass
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written whole under another name, then linked into place: a process
        # that starts at the same moment reads either nothing or the whole
        # key, and the second link fails, so both keep the first one made.
        draft = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as written:
            written.write(secrets.token_hex(32))
        try:
            os.link(draft, self.path)
        except FileExistsError:
            pass
        finally:
            draft.unlink()
        return self._read_private()


class ProcessKey(SealKey):
    """A key of this process alone: for runs that never leave its memory (the warm-up turn)."""

    def describe(self) -> str:
        return "key of this process"

    def _read(self) -> bytes:
        return secrets.token_hex(32).encode()


def open_seal_key(settings: Settings, aws: AwsSession | None = None) -> SealKey:
    """The secret RUN_KEY_SECRET names (deployed), else the key file of this machine."""
    if settings.run_key_secret:
        return SecretKey(settings.run_key_secret, aws)
    return FileKey(settings.run_key_file)


def _open_to_others(path: Path, found: os.stat_result, use: KeyUse) -> str:
    """What is wrong with a key file's permissions, with the command that mends them; or ""."""
    mode = stat.S_IMODE(found.st_mode)
    if os.name != "posix" or not mode & _OPEN_TO_OTHERS:
        return ""
    return (
        f"other users of this machine may read or change it (mode {mode:04o}), and whoever "
        f"reads it {use.risk}: make it private with "
        f"`chmod 600 {path}`, or delete it for a new key ({use.lost})"
    )


def _long_enough(key: bytes, where: str, use: KeyUse) -> bytes:
    if len(key) < MIN_KEY_CHARACTERS:
        raise _unavailable(
            where, f"it holds {len(key)} characters, fewer than {MIN_KEY_CHARACTERS}", use
        )
    return key


def _unavailable(where: str, cause: str, use: KeyUse) -> StoreUnavailable:
    return StoreUnavailable(
        f"{use.name} ({where}) could not be read: {cause}. Nothing was changed; "
        "try again once it can be read."
    )
