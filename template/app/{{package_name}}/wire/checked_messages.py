"""Each message of a thread is checked against Welt's schema once per process, not once per turn.

Welt resends the whole thread with every turn, so a thread of n turns would
have its first message checked n times, and a busy local server (one
process for every thread) would spend more on the check than on the agent.
A message that passed is remembered by a SHA-256 digest of its exact
content and of its place (only the first message must be the user's), so a
payload costs the check of its envelope and of the messages this process has
not passed before. A message that differs by one character, one key or its
key order is another digest, and is checked. Only passes are remembered,
and only for values made of exactly what JSON parsing builds (dict with
string keys, list, str): anything else, such as a tuple, which a JSON
serialiser writes like a list but the schema does not take for an array, is
checked every time. The memory is bounded and shared by every request.
"""

import copy
import hashlib
import threading
from collections import OrderedDict
from typing import Any

from jsonschema import Draft202012Validator

# About 100 bytes each: a thread of 20 turns holds 39 messages, so this
# covers 100 busy threads of one local server, and any AgentCore session.
MAX_REMEMBERED = 4096


class CheckedMessages:
    """Answers whether a `messages` payload fits the schema, checking each message once."""

    def __init__(self, schema: dict, max_remembered: int = MAX_REMEMBERED) -> None:
        messages = schema["properties"]["messages"]
        # The schema itself, cut in three: the envelope with the messages
        # left out, the first message, and every later one.
        envelope = copy.deepcopy(schema)
        del envelope["properties"]["messages"]["prefixItems"]
        del envelope["properties"]["messages"]["items"]
        self._envelope = Draft202012Validator(envelope)
        self._by_place = {
            b"first": _validator(schema, messages["prefixItems"][0]),
            b"later": _validator(schema, messages["items"]),
        }
        self._max = max_remembered
        self._passed: OrderedDict[bytes, None] = OrderedDict()
        self._lock = threading.Lock()

    def fit(self, payload: object) -> bool:
        """True when the payload is a `messages` payload that fits the schema whole.

        False says nothing more: the payload is not a turn, or something in
        it breaks the schema; the caller checks it whole to say what.
        """
        if not (
            isinstance(payload, dict)
            and isinstance(payload.get("messages"), list)
            and self._envelope.is_valid(payload)
        ):
            return False
        for index, message in enumerate(payload["messages"]):
            place = b"first" if index == 0 else b"later"
            key = _digest(place, message)
            if key is not None and self._remembered(key):
                continue
            if not self._by_place[place].is_valid(message):
                return False
            if key is not None:
                self._remember(key)
        return True

    def __len__(self) -> int:
        return len(self._passed)

    def _remembered(self, key: bytes) -> bool:
        with self._lock:
            if key not in self._passed:
                return False
            self._passed.move_to_end(key)
            return True

    def _remember(self, key: bytes) -> None:
        with self._lock:
            self._passed[key] = None
            self._passed.move_to_end(key)
            while len(self._passed) > self._max:
                self._passed.popitem(last=False)


def _validator(schema: dict, part: dict) -> Draft202012Validator:
    """A validator for one part of the schema, with its `$ref`s to `$defs` written out in place.

    The same rules, checked in half the time: jsonschema looks each `$ref`
    up anew on every check. A `$ref` that would contain itself stays one.
    """
    defs = schema["$defs"]

    def inlined(node: Any, within: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [inlined(item, within) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        name = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        if node.keys() == {"$ref"} and name is not None and name in defs and name not in within:
            return inlined(defs[name], within | {name})
        return {key: inlined(value, within) for key, value in node.items()}

    return Draft202012Validator({"$defs": defs, **inlined(part, frozenset())})


def _digest(place: bytes, message: Any) -> bytes | None:
    """SHA-256 of the message's exact content, or None when it holds anything but dict, list, str.

    Each node is written with its kind and its length before its content,
    so no two messages write the same bytes, and types are told apart by
    exact type: a tuple or an OrderedDict is not cached at all. Strings are
    hashed as UTF-8 with lone surrogates kept as they are: escaped, a lone
    pair would read like the character it would pair into. (json.dumps
    writes a tuple like a list; marshal takes 20 ms over 7 MB of base64.)
    """
    hasher = hashlib.sha256(place)
    stack = [message]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is str:
            data = node.encode("utf-8", "surrogatepass")
            hasher.update(b"s%d:" % len(data))
            hasher.update(data)
        elif kind is dict:
            hasher.update(b"d%d:" % len(node))
            for key, value in reversed(node.items()):
                if type(key) is not str:
                    return None
                stack += (value, key)
        elif kind is list:
            hasher.update(b"l%d:" % len(node))
            stack += reversed(node)
        else:
            return None
    return hasher.digest()
