"""How the operator connects to a cluster's ZooKeeper: connect string with chroot, SASL
(DIGEST-MD5 or GSSAPI), ZooKeeper digest auth, TLS, and Kafka-compatible ACLs for new znodes.

``ZkConnectionSettings`` is plain data (parsed from the operator's cluster configuration);
``connect()`` builds and starts a ``KazooClient``. With ``secure_acls`` (the cluster runs with
``zookeeper.set.acl=true``) new znodes get Kafka's ACLs: creator-all plus world-read, except
under the sensitive roots where world-read is omitted (``ZkData.defaultAcls``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.retry import KazooRetry
from kazoo.security import ACL, CREATOR_ALL_ACL, READ_ACL_UNSAFE

from kafka_zk_operator.domain import errors

SENSITIVE_ROOTS = ("/config/users", "/config/brokers", "/delegation_token/tokens")

#: Kafka's ``zookeeper.connect``: comma-separated HOST[:PORT] (name, IPv4 or [IPv6]), then /CHROOT.
CONNECT_FORMAT = "HOST:PORT[,HOST:PORT...][/CHROOT], e.g. zk-0:2181,zk-1:2181/kafka"
_HOST = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
_HOST_PORT = re.compile(rf"{_HOST}(:(?P<port>[0-9]{{1,5}}))?")


def hosts_problem(connect: str) -> str | None:
    """Why the host list of a connect string is not HOST[:PORT],... (None when it is)."""
    for entry in connect.partition("/")[0].split(","):
        match = _HOST_PORT.fullmatch(entry)
        if match is None:
            shown = repr(entry) if len(entry) <= 40 else repr(entry[:37]) + "..."
            return f"{shown} is not HOST or HOST:PORT"
        port = match.group("port")
        if port is not None and not 0 < int(port) < 65536:
            return f"port {port} is not in 1-65535"
    return None


def chroot_problem(connect: str) -> str | None:
    """Why the chroot of a connect string is not /NAME[/NAME...] (None when it is, or is absent)."""
    _, slash, chroot = connect.partition("/")
    if slash and chroot and any(not segment for segment in chroot.split("/")):
        shown = repr("/" + chroot) if len(chroot) < 40 else repr("/" + chroot[:36]) + "..."
        return f"the chroot {shown} has an empty segment"
    return None


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str = "DIGEST-MD5"
    username: str | None = None
    password: str | None = None
    service: str = "zookeeper"
    principal: str | None = None


@dataclass(frozen=True)
class TlsSettings:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    verify_certs: bool = True


@dataclass(frozen=True)
class ZkConnectionSettings:
    """Where and how to reach one Kafka cluster's ZooKeeper ensemble."""

    connect: str  # "host1:2181,host2:2181/chroot", exactly Kafka's zookeeper.connect
    session_timeout_s: float = 18.0
    connection_timeout_s: float = 15.0
    sasl: SaslSettings | None = None
    digest_auth: tuple[str, ...] = field(default_factory=tuple)  # "user:password" entries
    tls: TlsSettings | None = None
    secure_acls: bool = False
    read_only: bool = False

    @property
    def hosts(self) -> str:
        return self.connect.split("/", 1)[0]

    @property
    def chroot(self) -> str:
        return "/" + self.connect.split("/", 1)[1] if "/" in self.connect else ""


def kafka_acls(path: str, secure: bool) -> list[ACL] | None:
    """The ACL Kafka would put on ``path`` (None = ZooKeeper's open default)."""
    if not secure:
        return None
    if any(path == root or path.startswith(root + "/") for root in SENSITIVE_ROOTS):
        return list(CREATOR_ALL_ACL)
    return list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)


def build_client(settings: ZkConnectionSettings) -> KazooClient:
    kwargs: dict[str, object] = {
        "hosts": settings.connect,
        "timeout": settings.session_timeout_s,
        "connection_retry": KazooRetry(max_tries=-1, delay=0.5, max_delay=5),
        "command_retry": KazooRetry(max_tries=5, delay=0.2, max_delay=2),
        "read_only": settings.read_only,
    }
    if settings.sasl is not None:
        sasl: dict[str, str] = {"mechanism": settings.sasl.mechanism, "service": settings.sasl.service}
        if settings.sasl.username is not None:
            sasl["username"] = settings.sasl.username
        if settings.sasl.password is not None:
            sasl["password"] = settings.sasl.password
        if settings.sasl.principal is not None:
            sasl["principal"] = settings.sasl.principal
        kwargs["sasl_options"] = sasl
    if settings.digest_auth:
        kwargs["auth_data"] = [("digest", entry) for entry in settings.digest_auth]
    if settings.tls is not None:
        kwargs.update(
            use_ssl=True,
            ca=settings.tls.ca_file,
            certfile=settings.tls.cert_file,
            keyfile=settings.tls.key_file,
            keyfile_password=settings.tls.key_password,
            verify_certs=settings.tls.verify_certs,
        )
    return KazooClient(**kwargs)


def connect(settings: ZkConnectionSettings) -> KazooClient:
    """Build and start a client; raises ``ClusterUnavailable`` with the connect string on failure."""
    client = build_client(settings)
    try:
        client.start(timeout=settings.connection_timeout_s)
    except KazooTimeoutError as exc:
        client.close()
        raise errors.ClusterUnavailable(
            f"cannot connect to ZooKeeper at {settings.connect} within "
            f"{settings.connection_timeout_s:.0f} s; check the connect string, network and credentials"
        ) from exc
    return client
