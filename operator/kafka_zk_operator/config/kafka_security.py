"""How the operator authenticates to a cluster's Kafka listeners (``bootstrapServers``), as plain
data: the security protocol, TLS files and SASL credentials (a user and password, or a Kerberos principal
and keytab) of the clusters file's ``kafkaSecurity`` section.

Parsed by ``config.kafka_security_section``, turned into kafka-python's client arguments by
``adapters.kafka.admin_client``; nothing here opens a connection. The ZooKeeper connection has its
own ``tls`` and ``sasl`` settings (``config.zookeeper``).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Kafka's ``security.protocol`` values (kafka-python's ``security_protocol``).
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
#: The SASL mechanisms of Kafka's listeners the operator knows (kafka-python's ``sasl_mechanism``).
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI")
#: The mechanisms that log in with a username and a password.
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def uses_tls(protocol: str) -> bool:
    return protocol in ("SSL", "SASL_SSL")


def uses_sasl(protocol: str) -> bool:
    return protocol in ("SASL_PLAINTEXT", "SASL_SSL")


@dataclass(frozen=True)
class KafkaClientSecurity:
    """The security of the operator's Kafka client connections (the default: plaintext)."""

    protocol: str = "PLAINTEXT"
    #: TLS: the CA bundle that signed the brokers' certificates (None: the system's CAs).
    ca_file: str | None = None
    #: Mutual TLS: the client certificate (PEM, may hold the chain) and its private key.
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    #: The brokers' certificates must name the host of ``bootstrapServers`` and of each
    #: advertised listener (DNS or IP SAN), as Kafka's ``ssl.endpoint.identification.algorithm=https``.
    verify_hostname: bool = True
    #: SASL: one of :data:`SASL_MECHANISMS`; None without SASL.
    sasl_mechanism: str | None = None
    username: str | None = None
    password: str | None = None
    #: GSSAPI: the service name of the brokers' Kerberos principal (``kafka/<host>@REALM``).
    service: str = "kafka"
    #: GSSAPI: the host part of the brokers' principal when it is not the host the operator connects
    #: to (kafka-python's ``sasl_kerberos_domain_name``); None: each broker's host as advertised.
    domain: str | None = None
    #: GSSAPI: the Kerberos principal the operator logs in as.
    principal: str | None = None
    #: GSSAPI: the keytab holding the principal's key (MIT's client keytab, ``KRB5_CLIENT_KTNAME``);
    #: None uses the credentials cache the process has (``KRB5CCNAME``, e.g. from a kinit sidecar).
    keytab: str | None = None

    @property
    def summary(self) -> str:
        """``SASL_SSL SCRAM-SHA-512 as 'kzo'`` (GSSAPI: the principal): for messages (never the password)."""
        if self.sasl_mechanism is None:
            return self.protocol
        name = self.principal if self.sasl_mechanism == "GSSAPI" else self.username
        who = f" as {name!r}" if name else ""
        return f"{self.protocol} {self.sasl_mechanism}{who}"


PLAINTEXT = KafkaClientSecurity()
