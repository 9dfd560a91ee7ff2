"""Topic-name rules, ported from Kafka's ``org.apache.kafka.common.internals.Topic`` (3.9).

The controller checks neither names nor ``.``/``_`` collisions when a topic znode is written
directly, so every writer must (reference §6, §13 rule 9). Called by topic planning before any
``/brokers/topics/<t>`` write, and by CLI commands that take topic names.

Kafka's rules:

* legal characters are ASCII ``[a-zA-Z0-9._-]`` (``LEGAL_CHARS``), checked one by one;
* the name must not be empty, ``.`` or ``..``;
* at most 249 characters (Kafka counts UTF-16 code units; 255 before 0.10.0);
* ``.`` and ``_`` collide in metric names: two names collide when they are equal after
  replacing every ``.`` with ``_``; a new topic must not collide with an existing one;
* ``__consumer_offsets``, ``__transaction_state`` and ``__share_group_state`` are internal
  (``Topic.isInternal``); ``__cluster_metadata`` is the KRaft metadata log. The operator never
  creates, alters or deletes any of these four (:data:`RESERVED_TOPICS`).

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_zk_operator.domain import errors

#: Kafka's ``Topic.LEGAL_CHARS``, as documentation; checks use :data:`_LEGAL_CHAR_SET`.
LEGAL_CHARS = "[a-zA-Z0-9._-]"
#: Kafka's ``Topic.MAX_NAME_LENGTH`` since 0.10.0.0 (KAFKA-3219).
MAX_NAME_LENGTH = 249

GROUP_METADATA_TOPIC_NAME = "__consumer_offsets"
TRANSACTION_STATE_TOPIC_NAME = "__transaction_state"
SHARE_GROUP_STATE_TOPIC_NAME = "__share_group_state"
CLUSTER_METADATA_TOPIC_NAME = "__cluster_metadata"

#: Exactly the set behind Kafka 3.9's ``Topic.isInternal``.
INTERNAL_TOPICS = frozenset(
    {GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME, SHARE_GROUP_STATE_TOPIC_NAME}
)
#: Names the operator refuses to manage: the internal topics plus the KRaft metadata log.
RESERVED_TOPICS = INTERNAL_TOPICS | {CLUSTER_METADATA_TOPIC_NAME}

_LEGAL_CHAR_SET = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def _java_length(name: str) -> int:
    """``String.length()`` in Java: UTF-16 code units (a character above U+FFFF counts twice)."""
    if name.isascii():
        return len(name)
    return len(name.encode("utf-16-le", "surrogatepass")) // 2


def invalid_reason(name: str) -> str | None:
    """Why Kafka would reject ``name`` (its ``detectInvalidTopic`` order and wording), or ``None``."""
    if not name:
        return "the empty string is not allowed"
    if name == ".":
        return "'.' is not allowed"
    if name == "..":
        return "'..' is not allowed"
    if _java_length(name) > MAX_NAME_LENGTH:
        return f"the length of '{name}' is longer than the max allowed length {MAX_NAME_LENGTH}"
    if not _LEGAL_CHAR_SET.issuperset(name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def is_valid(name: str) -> bool:
    """Kafka's ``Topic.isValid``: legal characters, length and the ``.``/``..`` rule."""
    return invalid_reason(name) is None


def is_internal(name: str) -> bool:
    """Kafka's ``Topic.isInternal`` (3.9): the consumer-offsets, transaction and share-group state topics."""
    return name in INTERNAL_TOPICS


def is_reserved(name: str) -> bool:
    """An internal topic or the KRaft metadata log: never created, altered or deleted by the operator."""
    return name in RESERVED_TOPICS


def has_collision_chars(name: str) -> bool:
    """Kafka's ``Topic.hasCollisionChars``: the name contains ``.`` or ``_``."""
    return "_" in name or "." in name


def unify_collision_chars(name: str) -> str:
    """Kafka's ``Topic.unifyCollisionChars``: every ``.`` replaced by ``_`` (only for comparisons)."""
    return name.replace(".", "_")


def has_collision(name_a: str, name_b: str) -> bool:
    """Kafka's ``Topic.hasCollision``: equal once ``.`` and ``_`` are treated as the same character.

    Like Kafka, a name collides with itself; :func:`find_collision` skips identical names.
    """
    return unify_collision_chars(name_a) == unify_collision_chars(name_b)


def find_collision(name: str, existing_names: Iterable[str]) -> str | None:
    """The existing topic ``name`` would collide with, or ``None``.

    Mirrors the check in ``AdminZkClient.validateTopicCreate``: a name identical to ``name`` is
    "already exists", not a collision, and is skipped. When several collide, the smallest (in
    sorted order) is returned so that messages are deterministic.
    """
    if not has_collision_chars(name):
        return None  # without '.' or '_' only the identical name could match
    unified = unify_collision_chars(name)
    colliding = [
        other for other in existing_names if other != name and unify_collision_chars(other) == unified
    ]
    return min(colliding) if colliding else None


def validate_topic_name(name: str, *, allow_reserved: bool = False) -> None:
    """Raise :class:`~kafka_zk_operator.domain.errors.InvalidTopicName` unless Kafka accepts ``name``.

    Beyond Kafka's ``Topic.validate``, reserved names (:data:`RESERVED_TOPICS`) are refused
    unless ``allow_reserved`` is true, because the operator must never manage them.

    :raises InvalidTopicName: the message says what is wrong and how to fix it.
    """
    reason = invalid_reason(name)
    if reason is not None:
        raise errors.InvalidTopicName(f"Topic name is invalid: {reason}. {_how_to_fix(name)}")
    if not allow_reserved and is_reserved(name):
        raise errors.InvalidTopicName(
            f"Topic name '{name}' is reserved for Kafka's own use "
            f"({', '.join(sorted(RESERVED_TOPICS))}); choose another name."
        )


def _how_to_fix(name: str) -> str:
    if not name or name in {".", ".."}:
        return (
            f"Use 1 to {MAX_NAME_LENGTH} characters from {LEGAL_CHARS}, "
            "with at least one character other than '.'."
        )
    if _java_length(name) > MAX_NAME_LENGTH:
        return f"Shorten it to at most {MAX_NAME_LENGTH} characters."
    bad = sorted({ch for ch in name if ch not in _LEGAL_CHAR_SET})
    shown = ", ".join(repr(ch) for ch in bad[:10]) + (", ..." if len(bad) > 10 else "")
    return f"Remove or replace {shown}; only {LEGAL_CHARS} are allowed."
