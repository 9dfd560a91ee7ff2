"""Where and how the operator reaches one cluster's ZooKeeper, as plain data: the connect string
(Kafka's ``zookeeper.connect``) and the checks of its form, SASL, digest auth and TLS settings.

Parsed by ``config`` (the clusters file) and the CLI (``--zookeeper``), used by
``adapters.zk.session`` to connect; nothing here opens a connection.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import util

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


#: What ZooKeeper's SASL authentication offers (and pure-sasl implements).
SASL_MECHANISMS = ("DIGEST-MD5", "GSSAPI")
#: The module pure-sasl's GSSAPI mechanism imports (PyPI ``kerberos``: this project's ``kerberos`` extra).
KERBEROS_BINDING = "kerberos"


def kerberos_binding_installed() -> bool:
    """Whether the Python Kerberos binding that SASL GSSAPI needs can be imported (not importing it)."""
    return util.find_spec(KERBEROS_BINDING) is not None


@dataclass(frozen=True)
class SaslSettings:
    mechanism: str = "DIGEST-MD5"
    username: str | None = None
    password: str | None = None
    #: The service name of ZooKeeper's Kerberos principal (``<service>/<host>@REALM``); Java
    #: clients call it ``zookeeper.sasl.client.username``.
    service: str = "zookeeper"
    #: GSSAPI: the Kerberos principal the operator logs in as.
    principal: str | None = None
    #: GSSAPI: the keytab holding the principal's key (MIT's client keytab, ``KRB5_CLIENT_KTNAME``);
    #: None uses the credentials cache the process has (``KRB5CCNAME``, e.g. from a kinit sidecar).
    keytab: str | None = None


@dataclass(frozen=True)
class TlsSettings:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    verify_certs: bool = True
    #: The server certificate must name the host of the connect string (DNS or IP SAN), as
    #: Kafka's ``zookeeper.ssl.endpoint.identification.algorithm=HTTPS`` default requires.
    verify_hostname: bool = True


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
