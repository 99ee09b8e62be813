"""Where the endpoint claims a consent state, once: a replayed callback finds it claimed.

Deployed, an S3 object per state written with `If-None-Match: *`: S3
takes the first write of a key and refuses every later one, even at the
same moment from two Lambda instances. On this machine, a file per state
made with O_EXCL, which the file system takes once. The key is a digest
of the state's nonce: nothing a link carries is stored as it is.
"""

import hashlib
import os
from pathlib import Path
from typing import Any


class StoreUnavailable(Exception):
    """The store of claimed states could not be written: the endpoint completes nothing."""


class UsedStates:
    def claim(self, nonce: str) -> bool:
        """True the first time a nonce is claimed, False ever after."""
        raise NotImplementedError


def _name(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


class UsedStatesInBucket(UsedStates):
    def __init__(self, bucket: str, prefix: str, s3: Any) -> None:
        self.bucket, self.prefix, self.s3 = bucket, prefix, s3

    def claim(self, nonce: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.s3.put_object(
                Bucket=self.bucket, Key=f"{self.prefix}{_name(nonce)}", Body=b"", IfNoneMatch="*"
            )
        except ClientError as failure:
            code = failure.response.get("Error", {}).get("Code", "")
            # 412: the key is there; 409: a write of the same key at the same moment won.
            if code in ("PreconditionFailed", "ConditionalRequestConflict"):
                return False
            raise StoreUnavailable(f"s3://{self.bucket}/{self.prefix}: {code}") from None
        except BotoCoreError as failure:
            raise StoreUnavailable(f"s3://{self.bucket}/{self.prefix}: {failure}") from None
        return True


class UsedStatesInFolder(UsedStates):
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def claim(self, nonce: str) -> bool:
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            descriptor = os.open(
                self.folder / _name(nonce), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600
            )
        except FileExistsError:
            return False
        except OSError as failure:
            raise StoreUnavailable(f"{self.folder}: {failure}") from None
        os.close(descriptor)
        return True
