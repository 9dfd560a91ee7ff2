"""Kubernetes object names derived from Kafka topic names (for ``kzo import``).

A KafkaTopic's ``metadata.name`` must be a DNS-1123 subdomain: at most 253 characters of
lower-case ``[a-z0-9.-]``, made of dot-separated labels that start and end with a letter or digit.
Kafka topic names allow upper case, ``_`` and labels such as ``..`` or ``-x``, so
:func:`derive_names` maps every topic to a valid, unique name:

* lower-case the topic; every character outside ``[a-z0-9.-]`` becomes ``-``; leading and
  trailing ``-`` of each dot-separated label are dropped, and so are empty labels;
* a topic that comes out unchanged keeps its name exactly (``orders.v1`` → ``orders.v1``);
* a topic that changed (``Orders``, ``my_topic``, ``-x``) gets ``-`` plus a short hash of the
  *original* topic name appended (``my_topic`` → ``my-topic-<8 hex>``), so two topics that
  sanitise alike (``my_topic``, ``My_Topic`` and ``my-topic`` itself) never share a name;
* the rare leftover collision (a topic literally named like another's hashed name) is settled by
  lengthening the hash of the changed one.

The result depends only on the topic names, so importing again yields the same names (stable
Git diffs). The topic name itself always goes to ``spec.topicName``; ``metadata.name`` is only a
handle. Pure functions, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

#: Kubernetes' limit for a DNS-1123 subdomain (``metadata.name`` of a custom resource).
MAX_NAME_LENGTH = 253
#: Hex digits of the hash suffix; lengthened only to settle a collision.
HASH_LENGTH = 8
#: Used when nothing of the topic name survives sanitisation (e.g. ``___``).
FALLBACK_BASE = "topic"

_ILLEGAL = re.compile(r"[^a-z0-9.-]")
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")


def is_valid_name(name: str) -> bool:
    """Whether ``name`` is a valid DNS-1123 subdomain (what the API server requires)."""
    return len(name) <= MAX_NAME_LENGTH and _DNS1123_SUBDOMAIN.fullmatch(name) is not None


def sanitise(topic: str) -> str:
    """The topic name made into a DNS-1123 subdomain, without any hash suffix (may exceed 253)."""
    lowered = _ILLEGAL.sub("-", topic.lower())
    labels = [label.strip("-") for label in lowered.split(".")]
    base = ".".join(label for label in labels if label)
    return base or FALLBACK_BASE


def topic_hash(topic: str, length: int = HASH_LENGTH) -> str:
    """The first ``length`` hex digits of the SHA-256 of the topic name."""
    return hashlib.sha256(topic.encode("utf-8")).hexdigest()[:length]


def with_suffix(base: str, suffix: str) -> str:
    """``base-suffix`` cut to :data:`MAX_NAME_LENGTH`, ``base`` trimmed so the result stays valid."""
    room = MAX_NAME_LENGTH - len(suffix) - 1
    head = base[:room].rstrip("-.") or FALLBACK_BASE
    return f"{head}-{suffix}"


def derive_names(topics: Iterable[str]) -> dict[str, str]:
    """Map each topic to a unique, valid ``metadata.name`` (see the module docstring).

    Deterministic: the result depends only on the set of topic names.
    """
    ordered = sorted(set(topics))
    names: dict[str, str] = {}
    hashed: set[str] = set()
    for topic in ordered:
        base = sanitise(topic)
        if base == topic and len(base) <= MAX_NAME_LENGTH:
            names[topic] = base
        else:
            names[topic] = with_suffix(base, topic_hash(topic))
            hashed.add(topic)
    length = HASH_LENGTH
    while True:
        owners: dict[str, list[str]] = {}
        for topic, name in names.items():
            owners.setdefault(name, []).append(topic)
        clashes = [group for group in owners.values() if len(group) > 1]
        if not clashes:
            return names
        length += 4
        if length > 64:  # pragma: no cover - would need a SHA-256 collision
            raise ValueError(f"cannot derive unique names for topics {clashes[0]}")
        for group in clashes:
            for topic in group:
                if topic in hashed:
                    names[topic] = with_suffix(sanitise(topic), topic_hash(topic, length))
