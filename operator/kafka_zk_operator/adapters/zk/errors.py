"""Translate kazoo exceptions into domain errors, once, at the adapter boundary."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kazoo import exceptions as kz
from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState

from kafka_zk_operator.domain import errors


@contextlib.contextmanager
def mapped(client: KazooClient, path: str) -> Iterator[None]:
    """Run a ZooKeeper operation on ``path``; raise domain errors (chained) instead of kazoo's.

    Fails fast while the connection is down: kazoo queues a request made while it reconnects and
    blocks its caller until the connection is back, which during a quorum loss means every
    reconcile hangs for the whole outage (no status, no event, every worker thread taken). Such a
    request is never sent, so nothing is half-written.
    """
    if client.state != KazooState.CONNECTED:
        raise errors.ClusterUnavailable(
            f"ZooKeeper is unreachable (the session is {client.state.lower()}: reconnecting) while "
            f"accessing {path}; nothing was written, the operator retries"
        )
    try:
        yield
    except (kz.ConnectionLoss, kz.SessionExpiredError, kz.ConnectionClosedError) as exc:
        raise errors.ClusterUnavailable(f"lost the ZooKeeper connection while accessing {path}") from exc
    except kz.BadVersionError as exc:
        raise errors.VersionConflict(f"{path} changed since it was read; re-reading and retrying") from exc
    except kz.NoAuthError as exc:
        raise errors.ZooKeeperError(
            f"not authorised to change {path}: the operator must use the brokers' ZooKeeper identity "
            "(SASL or digest credentials in the cluster settings) when zookeeper.set.acl is on"
        ) from exc
    except kz.ZookeeperError as exc:
        raise errors.ZooKeeperError(
            f"ZooKeeper refused an operation on {path}: {type(exc).__name__}"
        ) from exc


def transaction_failure(results: list[object], paths: list[str]) -> errors.KzoError | None:
    """Turn a failed kazoo transaction's results (exception instances) into one domain error."""
    for result, path in zip(results, paths, strict=False):
        if isinstance(result, kz.RolledBackError):
            continue
        if isinstance(result, kz.NodeExistsError):
            return errors.ResourceConflict(f"{path} already exists (another writer created it)")
        if isinstance(result, kz.NoNodeError):
            return errors.VersionConflict(f"{path} does not exist any more; re-reading and retrying")
        if isinstance(result, kz.BadVersionError):
            return errors.VersionConflict(f"{path} changed since it was read; re-reading and retrying")
        if isinstance(result, kz.NoAuthError):
            return errors.ZooKeeperError(f"not authorised to write {path} (check the ZooKeeper identity)")
        if isinstance(result, Exception):
            return errors.ZooKeeperError(f"ZooKeeper refused writing {path}: {type(result).__name__}")
    return None
