"""What the unit tests of the KafkaTopic resync share: a clean resync's record, the stamps a read
found, one resync of a resource run to its end, and the count of resyncs that ended without a read."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Hashable
from types import SimpleNamespace
from typing import Any

from prometheus_client import REGISTRY

from kafka_zk_operator.adapters.zk.read_stamps import ReadStamps
from kafka_zk_operator.adapters.zk.stat_probe import Stamp
from kafka_zk_operator.handlers import kafkatopic_resync
from kafka_zk_operator.runtime import unchanged


def clean_record(
    key: Hashable, paths: tuple[str, ...], stamps: tuple[Stamp, ...], **more: Any
) -> unchanged.LastRead:
    """The record of a clean resync at zxid 100 from an empty status, no heartbeat due."""
    return unchanged.LastRead(
        key=key,
        paths=paths,
        stamps=stamps,
        status_digest=unchanged.status_digest({}),
        heartbeat_due=math.inf,
        zxid=100,
        **more,
    )


def read_stamps_of(paths: tuple[str, ...], stamps: tuple[Stamp, ...]) -> ReadStamps:
    """What a read that found ``paths`` with ``stamps`` recorded."""
    read = ReadStamps()
    for path, stamp in zip(paths, stamps, strict=True):
        read.note(path, stamp)
    return read


def run_resync(uid: str, name: str, status: dict[str, Any] | None = None) -> None:
    """One resync of the KafkaTopic ``uid`` (named ``name``) with ``status``, to its end."""
    view = {"metadata": {"uid": uid, "name": name, "namespace": "ns"}, "spec": {}, "status": status or {}}
    memo = SimpleNamespace(settings=SimpleNamespace(status_heartbeat_seconds=math.inf))
    asyncio.run(kafkatopic_resync.resync(view, memo, {}, asyncio.Event(), lambda: True))


def unchanged_count() -> float:
    """``kzo_resyncs_unchanged_total`` for KafkaTopics."""
    return REGISTRY.get_sample_value("kzo_resyncs_unchanged_total", {"kind": "kafkatopic"}) or 0.0
