"""Kerberos (SASL GSSAPI) logins of the operator's Kafka clients, through MIT's library.

kafka-python's GSSAPI mechanism (``kafka.net.sasl.gssapi``) imports the Python package ``gssapi``
(this project's ``kerberos`` extra) and, for each broker it connects to, opens a security context
to ``<service>@<host>`` (``sasl_kerberos_service_name``; the host is the broker's as the operator
reaches it, or ``sasl_kerberos_domain_name``) with the process's *default* credentials: it takes
no principal. So :func:`login`, run before each client starts (``admin_client.open_admin``):

- with a ``keytab``, points MIT's client keytab at it and keeps the tickets in the operator's
  private cache collection, as the ZooKeeper login does (``adapters.zk.kerberos.use_keytab``:
  one keytab per process, which may hold several principals); acquires the credentials of
  ``principal`` and stores them as the collection's default (its primary cache), the ones
  kafka-python then uses; MIT renews them from the keytab when they expire;
- without one, requires the credentials cache the process has (``KRB5CCNAME``, e.g. filled by a
  kinit sidecar) to hold ``principal``'s tickets;
- asks the KDC for a ticket to the brokers' principal of every bootstrap host, as kafka-python will.

A missing ``gssapi``, an unreadable keytab, a key the KDC refuses, an unknown principal (the
operator's or the brokers') or an unreachable KDC is then one ``ClusterUnavailable`` line with
MIT's reason and what to check, instead of kafka-python retrying until its bootstrap times out.
``krb5.conf`` is MIT's usual one: ``KRB5_CONFIG``, else ``/etc/krb5.conf``.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from kafka_zk_operator.adapters.zk import kerberos
from kafka_zk_operator.config.kafka_security import KafkaClientSecurity
from kafka_zk_operator.config.kafka_security_section import GSSAPI_MODULE
from kafka_zk_operator.domain import errors

_SERVER_HINT = (
    re.compile(r"Server .* not found in Kerberos database"),
    "the brokers' principals must be SERVICE/HOST@REALM with HOST as the operator reaches each broker "
    "(bootstrapServers and advertised.listeners) or kafkaSecurity.sasl.domainName (SERVICE: "
    "kafkaSecurity.sasl.service, default kafka)",
)


def gssapi_module(unavailable: type[errors.ClusterUnavailable]) -> Any:
    """The Python ``gssapi`` package (untyped). :raises ClusterUnavailable: it cannot be imported."""
    try:
        return importlib.import_module(GSSAPI_MODULE)
    except (ImportError, OSError) as exc:
        raise unavailable(
            f"Kafka SASL GSSAPI needs the Python package '{GSSAPI_MODULE}', which cannot be loaded "
            f"({' '.join(str(exc).split())}); install kafka-zk-operator[kerberos] and MIT Kerberos' "
            "libgssapi-krb5"
        ) from exc


def error_text(exc: BaseException) -> str:
    """MIT's words for a ``gssapi`` error (``Major (N): ..., Minor (M): ...``): the minor status,
    which says what happened, unless it is empty; else the major one (GSS-API's generic class)."""
    text = " ".join(str(exc).split())
    major, _, minor = text.partition(", Minor (")
    minor = minor.split("): ", 1)[-1] if minor else ""
    if minor and minor != "Unknown error":
        return minor
    return major.split("): ", 1)[-1] or type(exc).__name__


def _hint(text: str) -> str:
    for pattern, hint in (*kerberos.CLIENT_HINTS, _SERVER_HINT):
        if pattern.search(text):
            return hint
    return (
        "check the principal and keytab, that krb5.conf names a reachable KDC, and the brokers' "
        "principals (SERVICE/HOST@REALM)"
    )


def failure_text(security: KafkaClientSecurity, bootstrap: str, exc: BaseException) -> str:
    """One line for a Kerberos failure of the operator's login to Kafka at ``bootstrap``."""
    text = error_text(exc)
    source = f" from keytab {security.keytab}" if security.keytab else " from the credentials cache"
    return (
        f"Kerberos login of {security.principal!r}{source} for Kafka at {bootstrap} failed: {text}; "
        f"{_hint(text)} (krb5.conf: {kerberos.krb5_config()})"
    )


def _hosts(bootstrap: str, domain: str | None) -> list[str]:
    if domain is not None:
        return [domain]
    return sorted({address.rsplit(":", 1)[0].strip("[]") for address in bootstrap.split(",")})


def login(
    security: KafkaClientSecurity,
    bootstrap: str,
    unavailable: type[errors.ClusterUnavailable] = errors.ClusterUnavailable,
) -> None:
    """Make ``security.principal``'s credentials the default and check a ticket to the brokers.

    :raises ClusterUnavailable: (``unavailable``) ``gssapi`` is missing, the keytab unreadable, or
        Kerberos failed; one line with MIT's reason and what to check.
    """
    gssapi = gssapi_module(unavailable)
    if security.keytab is not None:
        try:
            with open(security.keytab, "rb"):
                pass
        except OSError as exc:
            reason = exc.strerror or " ".join(str(exc).split())
            raise unavailable(
                f"cannot read the keytab {security.keytab} of {security.principal!r} for Kafka at "
                f"{bootstrap}: {reason}; check that it is mounted and readable by the operator's user"
            ) from exc
        kerberos.use_keytab(security.keytab)
    try:
        name = gssapi.Name(security.principal, gssapi.NameType.kerberos_principal)
        credentials = gssapi.Credentials(name=name, usage="initiate")
        for host in _hosts(bootstrap, security.domain):
            target = gssapi.Name(f"{security.service}@{host}", gssapi.NameType.hostbased_service)
            gssapi.SecurityContext(name=target, creds=credentials, usage="initiate").step(None)
        if security.keytab is not None:
            credentials.store(usage="initiate", overwrite=True, set_default=True)
        default = str(gssapi.Credentials(usage="initiate").name)
        wanted = str(name.canonicalize(gssapi.MechType.kerberos))  # with the default realm
    except gssapi.exceptions.GSSError as exc:
        raise unavailable(failure_text(security, bootstrap, exc)) from exc
    if default != wanted:
        raise unavailable(
            f"the operator's default Kerberos credentials are {default!r}, not {security.principal!r}, "
            f"and kafka-python logs in to Kafka at {bootstrap} with the default ones; give "
            "kafkaSecurity.sasl.keytab, or fill the credentials cache (KRB5CCNAME) for that principal"
        )
