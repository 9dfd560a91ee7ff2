"""Kerberos (SASL GSSAPI) logins of the operator's ZooKeeper sessions, through MIT's library.

kazoo's GSSAPI goes through pure-sasl, which calls the Python binding ``kerberos`` (PyPI
``kerberos``, this project's ``kerberos`` extra): ``authGSSClientInit("zookeeper@<host>",
principal=...)`` for each server it connects to. MIT Kerberos (1.11 and later) then obtains the
principal's tickets from the *client keytab* by itself, without ``kinit``, and renews them from
it when they expire. :func:`use_keytab` points ``KRB5_CLIENT_KTNAME`` at the clusters file's
``keytab`` and, unless the environment names a credentials cache already, keeps the tickets in
a cache collection private to this process (``KRB5CCNAME=DIR:<tmp>/kafka-zk-operator-krb5cc-*``,
mode 0700, removed at exit; in the chart's pod ``/tmp`` is an emptyDir, the root filesystem stays
read-only). A collection, not a ``MEMORY:`` cache: a memory cache holds one principal, and MIT
refuses a second one ("Principal in credential cache does not match desired name") when clusters
log in as different principals. Both settings are process-wide, so ``config`` accepts one keytab
per process (it may hold several principals). ``krb5.conf`` is MIT's usual one:
``KRB5_CONFIG``, else ``/etc/krb5.conf``.

:func:`login` runs before kazoo connects (``session.connect``): it asks the KDC for a ticket to
ZooKeeper's principal (``<service>/<host>@REALM``) for every host of the connect string, as kazoo
will. An unreadable keytab, a key the KDC refuses, an unreachable KDC or an unknown ZooKeeper
principal is then one ``ClusterUnavailable`` line naming what to check, instead of kazoo's
"AUTH_FAILED: Unknown error". The ticket stays cached, so kazoo's own login reuses it.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable
from types import ModuleType

from kafka_zk_operator.config.zookeeper import KERBEROS_BINDING, SaslSettings
from kafka_zk_operator.domain import errors

#: The prefix of the private credentials cache folder used when the environment names none.
CCACHE_PREFIX = "kafka-zk-operator-krb5cc-"
#: What MIT's messages say of the operator's own login (a pattern), and what to check then: shared
#: with the Kafka clients' GSSAPI (``adapters.kafka.admin_kerberos``).
CLIENT_HINTS = (
    (
        re.compile(
            r"Preauthentication failed|Key table entry not found|in cache collection|Decrypt integrity|Password incorrect"
        ),
        "the keytab must hold the principal's current key (a later kadmin ktadd of the same principal "
        "makes earlier keytabs stale); list it with 'klist -kt KEYTAB'",
    ),
    (
        re.compile(r"Client .* not found in Kerberos database"),
        "the KDC does not know this principal: create it (kadmin addprinc) or fix the name",
    ),
    (
        re.compile(r"Cannot contact any KDC|Cannot find KDC|Cannot resolve network address for KDC"),
        "krb5.conf must name a KDC of the principal's realm that this pod can reach",
    ),
)
_HINTS = (
    *CLIENT_HINTS,
    (
        re.compile(r"Server .* not found in Kerberos database"),
        "ZooKeeper's principal must be SERVICE/HOST@REALM with HOST exactly as in the connect string "
        "(SERVICE: sasl.service, default zookeeper)",
    ),
)


def binding() -> ModuleType:
    """The Python Kerberos binding. :raises ClusterUnavailable: it cannot be imported."""
    try:
        return importlib.import_module(KERBEROS_BINDING)
    except ImportError as exc:
        raise errors.ClusterUnavailable(
            f"SASL GSSAPI needs the Python Kerberos binding '{KERBEROS_BINDING}', which cannot be "
            f"loaded ({' '.join(str(exc).split())}); install kafka-zk-operator[kerberos] and MIT "
            "Kerberos' libgssapi-krb5"
        ) from exc


def krb5_config() -> str:
    """The krb5.conf MIT's library reads (for messages)."""
    return os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"


@functools.cache
def private_ccache() -> str:
    """``DIR:`` + a new folder only this process uses (mode 0700), removed when it exits."""
    folder = tempfile.mkdtemp(prefix=CCACHE_PREFIX)
    atexit.register(shutil.rmtree, folder, True)
    return f"DIR:{folder}"


def use_keytab(keytab: str) -> None:
    """Make MIT's library take initial tickets from ``keytab``, kept in :func:`private_ccache`
    unless ``KRB5CCNAME`` names a cache. Changes the process environment only when it differs."""
    wanted = {"KRB5_CLIENT_KTNAME": f"FILE:{os.path.abspath(keytab)}"}
    if not os.environ.get("KRB5CCNAME"):
        wanted["KRB5CCNAME"] = private_ccache()
    for key, value in wanted.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def gss_error_text(exc: BaseException) -> str:
    """MIT's own words for a ``kerberos.GSSError``: its minor status, which says what happened (the
    major one is GSS-API's generic class, e.g. "No credentials were supplied"), else the major."""
    for status in reversed(exc.args):
        if isinstance(status, tuple) and status and isinstance(status[0], str):
            text = " ".join(status[0].split())
            if text and "Minor code may provide more information" not in text:
                return text
    return " ".join(str(exc).split()) or type(exc).__name__


def _hint(text: str) -> str:
    for pattern, hint in _HINTS:
        if pattern.search(text):
            return hint
    return (
        "check the keytab, that krb5.conf names a reachable KDC, and that ZooKeeper's principal is "
        "SERVICE/HOST@REALM with HOST as in the connect string"
    )


def failure_text(sasl: SaslSettings, where: str, exc: BaseException) -> str:
    """One line for a Kerberos failure of ``sasl``'s login to ``where``."""
    text = gss_error_text(exc)
    keytab = f" from keytab {sasl.keytab}" if sasl.keytab else " from the credentials cache"
    return (
        f"Kerberos login of {sasl.principal!r}{keytab} for {where} failed: {text}; {_hint(text)} "
        f"(krb5.conf: {krb5_config()})"
    )


def login(sasl: SaslSettings, connect: str, hosts: Iterable[str]) -> None:
    """Obtain a ticket for ZooKeeper on each of ``hosts`` as ``sasl.principal``.

    :raises ClusterUnavailable: the binding is missing, the keytab unreadable, or Kerberos failed;
        one line with MIT's reason and what to check.
    """
    krb = binding()
    if sasl.keytab is not None:
        try:
            with open(sasl.keytab, "rb"):
                pass
        except OSError as exc:
            reason = exc.strerror or " ".join(str(exc).split())
            raise errors.ClusterUnavailable(
                f"cannot read the keytab {sasl.keytab} of {sasl.principal!r} for ZooKeeper at {connect}: "
                f"{reason}; check that it is mounted and readable by the operator's user"
            ) from exc
        use_keytab(sasl.keytab)
    for host in sorted(set(hosts)):
        service = f"{sasl.service}@{host}"
        context = None
        try:
            _, context = krb.authGSSClientInit(service, principal=sasl.principal)
            krb.authGSSClientStep(context, "")
        except krb.GSSError as exc:
            where = f"ZooKeeper at {connect} (service {sasl.service}/{host})"
            raise errors.ClusterUnavailable(failure_text(sasl, where, exc)) from exc
        finally:
            if context is not None:
                krb.authGSSClientClean(context)
