"""The leader's fence in a Kafka cluster's ZooKeeper: a znode whose data version is the token every
write transaction of the elected operator replica checks.

The Lease (``runtime.leadership``) decides who leads; it cannot stop a replica that was paused
(SIGSTOP, a frozen VM, a long GC) between deciding to write and writing. So a replica that becomes
leader *claims* the fence of each cluster it writes to - rewrites the znode, moving its version -
and adds ``check(fence, version it claimed)`` to every transaction (``GuardedWrites._transaction``).
Once a newer leader has claimed it, any transaction of an older one fails as a whole in
ZooKeeper: nothing it sends after losing the lease can land, however late it arrives.

The znode lives under ``/kafka-zk-operator/leaders`` in the cluster's chroot, one per Lease
(``<namespace>.<name>``), so operators of different installs serving the same Kafka cluster fence
only their own replicas. Kafka ignores paths it does not own; the znode holds the holder's
identity as JSON, for people. Only written when leader election is on.
"""

from __future__ import annotations

import json

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from kafka_zk_operator.adapters.zk import errors as zk_errors
from kafka_zk_operator.adapters.zk.session import kafka_acls
from kafka_zk_operator.domain import errors

FENCES_PATH = "/kafka-zk-operator/leaders"
_ATTEMPTS = 5


def fence_path(lease_namespace: str, lease_name: str) -> str:
    return f"{FENCES_PATH}/{lease_namespace}.{lease_name}"


def claim(client: KazooClient, path: str, holder: str, *, secure_acls: bool) -> int:
    """Rewrite the fence znode for ``holder``; returns the version its transactions must check.

    :raises ZooKeeperError: ZooKeeper refused (e.g. no permission), or kept changing it.
    :raises ClusterUnavailable: the connection is down.
    """
    data = json.dumps({"version": 1, "holder": holder}).encode()
    acl = kafka_acls(path, secure_acls)
    with zk_errors.mapped(client, path):
        for _ in range(_ATTEMPTS):
            try:
                _, stat = client.get(path)
            except NoNodeError:
                parent = path.rsplit("/", 1)[0]
                client.ensure_path(parent, acl=acl)
                try:
                    client.create(path, data, acl=acl)
                except NodeExistsError:
                    continue
                return 0
            try:
                return int(client.set(path, data, version=stat.version).version)
            except BadVersionError:
                continue
    raise errors.ZooKeeperError(f"{path} kept changing while the operator claimed it; retrying")
