"""The clusters file's ``kafkaSecurity`` section: how the operator logs in to ``bootstrapServers``.

::

    kafkaSecurity:
      protocol: SASL_SSL                 # PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
      tls:                               # SSL and SASL_SSL
        caFile: /etc/kzo/kafka-tls/ca.crt
        certFile: /etc/kzo/kafka-tls/tls.crt      # optional: mutual TLS, with keyFile
        keyFile: /etc/kzo/kafka-tls/tls.key
        keyPasswordFile: /etc/kzo/kafka-tls/key-password   # optional: an encrypted keyFile
        verifyHostname: true
      sasl:                              # SASL_PLAINTEXT and SASL_SSL
        mechanism: SCRAM-SHA-512         # PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or GSSAPI
        usernameFile: /etc/kzo/kafka/username     # or username: kzo
        passwordFile: /etc/kzo/kafka/password

    # GSSAPI (Kerberos) logs in with a principal and its keytab instead:
      sasl:
        mechanism: GSSAPI
        principal: kzo@EXAMPLE.COM
        keytab: /etc/kzo-krb5/operator.keytab     # optional: without it, the credentials cache
        service: kafka                   # the brokers' principals are kafka/<host>@REALM (default)
        domainName: kafka.example.com    # optional: one <host> for every broker

Without ``protocol`` it follows from the sections given (tls: SSL, sasl: SASL_PLAINTEXT, both:
SASL_SSL). The TLS files are loaded here once (as the client will), so that a missing file, a key
that does not match its certificate or a wrong key password is a :class:`SettingsError` at start,
one line naming the key, like every other mistake in the section. GSSAPI needs the Python package
``gssapi`` (the ``kerberos`` extra) and reads MIT's ``krb5.conf`` (``KRB5_CONFIG``); the keytab is
checked to be one here, the login itself happens when a client connects (``adapters.kafka``).
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from importlib import util
from typing import Any

from kafka_zk_operator.config import kafka_security
from kafka_zk_operator.config.kafka_security import KafkaClientSecurity
from kafka_zk_operator.config.settings import SettingsError
from kafka_zk_operator.config.values import (
    flag,
    kerberos_principal,
    keytab_file,
    kind_of,
    one_line,
    optional_str,
    plain,
    read_bytes,
    secret_file,
    show,
    subsection,
)

_SECTION_KEYS = ("protocol", "tls", "sasl")
_TLS_KEYS = ("caFile", "certFile", "keyFile", "keyPasswordFile", "verifyHostname")
_SASL_KEYS = (
    "mechanism",
    "username",
    "usernameFile",
    "passwordFile",
    "service",
    "principal",
    "keytab",
    "domainName",
)
_PASSWORD_KEYS = ("username", "usernameFile", "passwordFile")
_GSSAPI_KEYS = ("principal", "keytab", "domainName")
_DOMAIN_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")
_SERVICE_NAME = re.compile(r"[A-Za-z0-9._-]+")
#: The module kafka-python's SASL GSSAPI mechanism imports (PyPI ``gssapi``).
GSSAPI_MODULE = "gssapi"


def gssapi_installed() -> bool:
    """Whether kafka-python's Kerberos binding can be imported (not importing it)."""
    return util.find_spec(GSSAPI_MODULE) is not None


def _only_known(section: Mapping[Any, Any], keys: tuple[str, ...], where: str) -> None:
    for key in section:
        if key not in keys:
            hint = (
                "; the brokers' certificate is always checked against caFile (or the system's CAs)"
                if key == "verify"
                else ""
            )
            raise SettingsError(f"{where}: unknown key {show(key)}; expected one of {', '.join(keys)}{hint}")


def _protocol(raw: Mapping[Any, Any], where: str, tls: bool, sasl: bool) -> str:
    given = optional_str(raw, "protocol", where)
    if given is None:
        return {(False, False): "PLAINTEXT", (True, False): "SSL", (False, True): "SASL_PLAINTEXT"}.get(
            (tls, sasl), "SASL_SSL"
        )
    protocol = given.strip().upper()
    if protocol not in kafka_security.PROTOCOLS:
        raise SettingsError(
            f"{where}.protocol {show(given)} is not a Kafka security protocol; use "
            f"{', '.join(kafka_security.PROTOCOLS)} (the brokers' listener.security.protocol.map)"
        )
    if sasl and not kafka_security.uses_sasl(protocol):
        raise SettingsError(
            f"{where}.sasl needs protocol SASL_PLAINTEXT or SASL_SSL, and protocol is {protocol}: "
            "change protocol to the listener's, or remove sasl"
        )
    if not sasl and kafka_security.uses_sasl(protocol):
        raise SettingsError(
            f"{where}: protocol {protocol} needs a sasl section (mechanism, and usernameFile or username "
            "and passwordFile, or GSSAPI's principal and keytab): the operator's login on that listener"
        )
    if tls and not kafka_security.uses_tls(protocol):
        raise SettingsError(
            f"{where}.tls is for protocol SSL or SASL_SSL, and protocol is {protocol}: change protocol "
            "to the listener's, or remove tls"
        )
    return protocol


def _pem_file(section: Mapping[Any, Any], key: str, where: str) -> str | None:
    path = optional_str(section, key, where)
    if path is None:
        return None
    what = f"{where}.{key}"
    if not path.strip():
        raise SettingsError(f"{what} must be the path of a PEM file, got an empty string")
    if b"-----BEGIN " not in read_bytes(
        path, what, "the Secret is mounted and readable by the operator's user"
    ):
        raise SettingsError(f"{what}: {plain(path)} is not PEM (no '-----BEGIN' line); give a PEM file")
    return path


def _no_password() -> str:
    return ""  # an encrypted key fails to load instead of OpenSSL prompting on a terminal


def _loaded(tls: KafkaClientSecurity, where: str) -> None:
    """Load the TLS files as kafka-python will (``ssl.SSLContext``), each failure one line."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if tls.ca_file is not None:
        try:
            context.load_verify_locations(tls.ca_file)
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise SettingsError(
                f"{where}.caFile: {plain(tls.ca_file)} holds no usable CA certificate "
                f"({one_line(str(exc))}); give the PEM certificate(s) of the CA that signed the brokers'"
            ) from None
    if tls.cert_file is not None and tls.key_file is not None:
        try:
            context.load_cert_chain(tls.cert_file, tls.key_file, tls.key_password or _no_password)
        except (ssl.SSLError, OSError, ValueError) as exc:
            raise SettingsError(
                f"{where}: certFile and keyFile do not load ({one_line(str(exc))}): they must be the "
                "client certificate and its own private key (PEM); an encrypted key needs "
                "keyPasswordFile with the right password"
            ) from None


def _tls(section: Mapping[Any, Any], where: str) -> dict[str, Any]:
    _only_known(section, _TLS_KEYS, where)
    fields: dict[str, Any] = {
        "ca_file": _pem_file(section, "caFile", where),
        "cert_file": _pem_file(section, "certFile", where),
        "key_file": _pem_file(section, "keyFile", where),
        "key_password": secret_file(section, "keyPasswordFile", where),
        "verify_hostname": flag(section, "verifyHostname", where, True),
    }
    if (fields["cert_file"] is None) != (fields["key_file"] is None):
        raise SettingsError(
            f"{where}: certFile and keyFile go together (the client certificate and its private key, "
            "PEM); give both for mutual TLS, or neither"
        )
    if fields["key_password"] is not None and fields["key_file"] is None:
        raise SettingsError(f"{where}: keyPasswordFile decrypts keyFile; give keyFile too")
    _loaded(KafkaClientSecurity(**fields), where)
    return fields


def _sasl(section: Mapping[Any, Any], where: str) -> dict[str, Any]:
    _only_known(section, _SASL_KEYS, where)
    given = optional_str(section, "mechanism", where)
    mechanism = (given or "").strip().upper()
    if mechanism not in kafka_security.SASL_MECHANISMS:
        raise SettingsError(
            f"{where}.mechanism must be one of {', '.join(kafka_security.SASL_MECHANISMS)} (the listener's "
            f"sasl.enabled.mechanisms), got {show(given) if given is not None else 'nothing'}"
        )
    service = optional_str(section, "service", where)
    if service is not None and not _SERVICE_NAME.fullmatch(service):
        raise SettingsError(
            f"{where}.service must be the service name of the brokers' Kerberos principal (letters, "
            f"digits, '.', '_', '-'; default 'kafka'), got {show(service)}"
        )
    if mechanism == "GSSAPI":
        return _gssapi(section, where, service or "kafka")
    for key in _GSSAPI_KEYS:
        if section.get(key) is not None:
            raise SettingsError(
                f"{where}.{key} is for mechanism GSSAPI (Kerberos); {mechanism} logs in with "
                "usernameFile (or username) and passwordFile"
            )
    username = secret_file(section, "usernameFile", where) or optional_str(section, "username", where)
    password = secret_file(section, "passwordFile", where)
    if not (username and username.strip() and password):
        raise SettingsError(
            f"{where}: {mechanism} needs usernameFile (or username) and passwordFile, non-empty: the "
            "Kafka user the operator logs in as (for SCRAM, created with kafka-configs --alter "
            "--add-config 'SCRAM-SHA-512=[password=...]' --entity-type users)"
        )
    return {
        "sasl_mechanism": mechanism,
        "username": username.strip(),
        "password": password,
        "service": service or "kafka",
    }


def _gssapi(section: Mapping[Any, Any], where: str, service: str) -> dict[str, Any]:
    for key in _PASSWORD_KEYS:
        if section.get(key) is not None:
            raise SettingsError(
                f"{where}.{key} is for PLAIN and SCRAM; GSSAPI (Kerberos) logs in with principal and keytab"
            )
    principal = kerberos_principal(section, where, "kzo@EXAMPLE.COM")
    keytab = keytab_file(section, where)
    domain = optional_str(section, "domainName", where)
    if domain is not None and not _DOMAIN_NAME.fullmatch(domain):
        raise SettingsError(
            f"{where}.domainName must be a host name, the <host> of the brokers' principals "
            f"({service}/<host>@REALM), got {show(domain)}; leave it out to use each broker's own host"
        )
    if not gssapi_installed():
        raise SettingsError(
            f"{where}: GSSAPI needs the Python package '{GSSAPI_MODULE}' (kafka-python's Kerberos), "
            "which is not installed; install kafka-zk-operator[kerberos] (built against MIT Kerberos, "
            "Debian libkrb5-dev)"
        )
    return {
        "sasl_mechanism": "GSSAPI",
        "service": service,
        "principal": principal,
        "keytab": keytab,
        "domain": domain,
    }


def parse(raw: object, where: str) -> KafkaClientSecurity:
    """The ``kafkaSecurity`` value at ``where`` (e.g. ``clusters[0].kafkaSecurity``).

    :raises SettingsError: one line naming the key and what to write instead.
    """
    if not isinstance(raw, Mapping):
        raise SettingsError(
            f"{where} must be a mapping with protocol, tls and/or sasl (e.g. 'protocol: SASL_SSL'), got {kind_of(raw)}"
        )
    _only_known(raw, _SECTION_KEYS, where)
    tls = subsection(raw, "tls", where)
    sasl = subsection(raw, "sasl", where)
    protocol = _protocol(raw, where, tls is not None, sasl is not None)
    fields: dict[str, Any] = {"protocol": protocol}
    if tls is not None:
        fields.update(_tls(tls, f"{where}.tls"))
    if sasl is not None:
        fields.update(_sasl(sasl, f"{where}.sasl"))
    return KafkaClientSecurity(**fields)
