"""Kafka topic ids (``Uuid``, KIP-516): validation and generation, pure and seedable.

Used by the topic znode codec (``znodes_topics``) to check ``topic_id`` on read and write, and by
whoever decides to assign an id itself (normally the controller does, at IBP >= 2.8). Mirrors
``org.apache.kafka.common.Uuid``: URL-safe base64 of 16 bytes without ``=`` padding (22 chars),
never the reserved all-zero or ``...0001`` ids. Kafka's generator draws a
``java.util.UUID.randomUUID()`` (RFC 4122 version 4), so ``generate_topic_id`` sets the same
version and variant bits.

A leading ``-`` is valid: Kafka 2.8-3.1 generated such ids (one in 64; seen from a real 2.8.2
controller in this project's tests). Since KAFKA-13741 (3.2) ``Uuid.randomUuid`` redraws them, and
so does ``generate_topic_id``; ``Uuid.fromString`` has always accepted them.
"""

from __future__ import annotations

import base64
import random
import re
import uuid
from collections.abc import Callable
from typing import Final, TypeAlias

TOPIC_ID_LENGTH: Final = 22
TOPIC_ID_BYTES: Final = 16
#: ``Uuid.ZERO_UUID`` and ``Uuid.ONE_UUID`` / ``METADATA_TOPIC_ID``: never valid topic ids.
ZERO_TOPIC_ID: Final = "AAAAAAAAAAAAAAAAAAAAAA"
METADATA_TOPIC_ID: Final = "AAAAAAAAAAAAAAAAAAAAAQ"
RESERVED_TOPIC_IDS: Final = frozenset({ZERO_TOPIC_ID, METADATA_TOPIC_ID})
#: Draws before ``generate_topic_id`` gives up on a source that only yields unusable ids.
MAX_GENERATION_ATTEMPTS: Final = 100

_URLSAFE_BASE64: Final = re.compile(r"[A-Za-z0-9_-]+")

#: A source of random bytes: ``random.Random`` (seeded in tests) or ``f(n) -> n bytes``.
RandomSource: TypeAlias = random.Random | Callable[[int], bytes]


def topic_id_to_bytes(topic_id: str) -> bytes:
    """The 16 bytes of a valid topic id; raises ``ValueError`` with the reason otherwise."""
    problem = topic_id_problem(topic_id)
    if problem is not None:
        raise ValueError(problem)
    return base64.urlsafe_b64decode(topic_id + "==")


def topic_id_from_bytes(raw: bytes) -> str:
    """Kafka's ``Uuid.toString`` of 16 bytes (no validity check beyond the length)."""
    if len(raw) != TOPIC_ID_BYTES:
        raise ValueError(f"a topic id has {TOPIC_ID_BYTES} bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def topic_id_problem(topic_id: str) -> str | None:
    """Why ``topic_id`` is not a topic id Kafka could have written, or ``None`` if it is one."""
    shown = topic_id if len(topic_id) <= 40 else topic_id[:37] + "..."
    if len(topic_id) != TOPIC_ID_LENGTH or not _URLSAFE_BASE64.fullmatch(topic_id):
        return (
            f"topic_id '{shown}' is not a {TOPIC_ID_LENGTH}-character Kafka Uuid "
            "(URL-safe base64 of 16 bytes without padding)"
        )
    raw = base64.urlsafe_b64decode(topic_id + "==")
    if topic_id_from_bytes(raw) != topic_id:
        return f"topic_id '{shown}' is not canonical base64: its last character carries stray bits"
    if topic_id in RESERVED_TOPIC_IDS:
        return f"topic_id '{shown}' is a reserved Kafka Uuid (zero or metadata topic id)"
    return None


def is_valid_topic_id(topic_id: str) -> bool:
    return topic_id_problem(topic_id) is None


def _draw(source: RandomSource) -> bytes:
    raw = source.randbytes(TOPIC_ID_BYTES) if isinstance(source, random.Random) else source(TOPIC_ID_BYTES)
    if len(raw) != TOPIC_ID_BYTES:
        raise ValueError(f"the random source returned {len(raw)} bytes, expected {TOPIC_ID_BYTES}")
    return raw


def generate_topic_id(source: RandomSource) -> str:
    """A fresh topic id as Kafka's ``Uuid.randomUuid`` makes it, drawn from ``source``.

    Pass ``random.Random(seed)`` in tests and ``secrets.token_bytes`` (or ``random.SystemRandom()``)
    in production. Redraws while the id is reserved or starts with ``-`` (as Kafka 3.2+ does).

    :raises ValueError: the source returns the wrong number of bytes, or only unusable ids.
    """
    for _ in range(MAX_GENERATION_ATTEMPTS):
        raw = uuid.UUID(bytes=_draw(source), version=4).bytes
        candidate = topic_id_from_bytes(raw)
        if is_valid_topic_id(candidate) and not candidate.startswith("-"):
            return candidate
    raise ValueError(f"the random source gave no usable topic id in {MAX_GENERATION_ATTEMPTS} draws")
