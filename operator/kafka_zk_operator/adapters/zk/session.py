"""How the operator connects to a cluster's ZooKeeper: connect string with chroot, SASL
(DIGEST-MD5 or GSSAPI), ZooKeeper digest auth, TLS, and Kafka-compatible ACLs for new znodes.

``ZkConnectionSettings`` (``kafka_zk_operator.config.zookeeper``) is plain data;
``connect()`` builds and starts a ``KazooClient``. With ``secure_acls`` (the cluster runs with
``zookeeper.set.acl=true``) new znodes get Kafka's ACLs: creator-all plus world-read, except
under the sensitive roots where world-read is omitted (``ZkData.defaultAcls``). The ``auth``
ACL scheme of creator-all makes ZooKeeper grant the session's own identities: ``sasl:<user>``
after a SASL login (what Kafka's ACLs name), ``x509:<DN>`` for a TLS client certificate, or
``digest:<user>:<hash>``.

``connect()`` returns only an authenticated session: a refused SASL login, a server that
demands SASL, or a failed TLS handshake is one ``ClusterUnavailable`` line saying so, raised as
soon as it is known (a refused login is never retried by kazoo, so there is nothing to wait for).
A TLS failure is raised as soon as every server of the connect string has refused the handshake
(or at once when the client's own certificate or key cannot be loaded): kazoo would retry them
until the connection timeout, and they would refuse again.
"""

from __future__ import annotations

import logging
import select
import ssl
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any, TypeAlias

from kazoo import exceptions as kz
from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError, SequentialThreadingHandler
from kazoo.hosts import collect_hosts
from kazoo.protocol.connection import ConnectionHandler
from kazoo.protocol.states import KazooState, KeeperState
from kazoo.retry import KazooRetry
from kazoo.security import ACL, CREATOR_ALL_ACL, READ_ACL_UNSAFE

from kafka_zk_operator.adapters.zk import batched_sends, kerberos
from kafka_zk_operator.config.zookeeper import KERBEROS_BINDING, ZkConnectionSettings
from kafka_zk_operator.domain import errors

log = logging.getLogger(__name__)


def _is_gss_error(exc: BaseException | None) -> bool:
    """A ``kerberos.GSSError`` (told by name: the binding is optional and may be missing)."""
    return exc is not None and type(exc).__module__ == KERBEROS_BINDING and type(exc).__name__ == "GSSError"


def _gss_error(exc: BaseException | None) -> BaseException | None:
    """The ``kerberos.GSSError`` that ``exc`` is or was caused by, if any."""
    seen = 0
    while exc is not None and seen < 5:
        if _is_gss_error(exc):
            return exc
        exc, seen = exc.__cause__, seen + 1
    return None


class _NoSaslRefusalTraceback(logging.Filter):
    """kazoo 2.11 logs a SASL login refused by a server with enforced authentication, and a
    Kerberos failure of pure-sasl's GSSAPI, as an "Unhandled exception in connection loop" with a
    traceback; ``_WatchfulHandler`` reports them in one line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        failure = record.exc_info[1] if record.exc_info else None
        return not (isinstance(failure, kz.SessionClosedRequireSaslError) or _is_gss_error(failure))


#: kazoo's logger for our clients: a child of kazoo's own (same level and handlers), filtered.
kazoo_log = logging.getLogger("kazoo.client.kzo")
kazoo_log.addFilter(_NoSaslRefusalTraceback())

SENSITIVE_ROOTS = ("/config/users", "/config/brokers", "/delegation_token/tokens")


def kafka_acls(path: str, secure: bool) -> list[ACL] | None:
    """The ACL Kafka would put on ``path`` (None = ZooKeeper's open default)."""
    if not secure:
        return None
    if any(path == root or path.startswith(root + "/") for root in SENSITIVE_ROOTS):
        return list(CREATOR_ALL_ACL)
    return list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)


def build_client(settings: ZkConnectionSettings, handler: object | None = None) -> KazooClient:
    kwargs: dict[str, object] = {
        "hosts": settings.connect,
        "timeout": settings.session_timeout_s,
        "connection_retry": KazooRetry(max_tries=-1, delay=0.5, max_delay=5),
        "command_retry": KazooRetry(max_tries=5, delay=0.2, max_delay=2),
        "read_only": settings.read_only,
        "logger": kazoo_log,
    }
    if handler is not None:
        kwargs["handler"] = handler
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
            # Never None: OpenSSL would prompt on the terminal for an encrypted key's passphrase;
            # an empty one fails like a wrong one (see _tls_reason).
            keyfile_password=settings.tls.key_password
            if settings.tls.key_password is not None
            else _no_passphrase,
            verify_certs=settings.tls.verify_certs,
            check_hostname=settings.tls.verify_certs and settings.tls.verify_hostname,
        )
    return KazooClient(**kwargs)


class _WatchfulHandler(SequentialThreadingHandler):  # type: ignore[misc]  # kazoo is untyped
    """kazoo's default handler, remembering why connecting failed (kazoo itself only logs it).

    It keeps the last socket or TLS error of a connection attempt, and it ends kazoo's connection
    thread quietly when an exception escapes it: kazoo 2.11 lets the error of a SASL login that a
    server with enforced authentication (``sessionRequireClientSASLAuth``) refuses out of that
    thread, which would print a traceback and leave the client closed anyway.
    """

    def __init__(self, servers: frozenset[tuple[str, int]] = frozenset()) -> None:
        super().__init__()
        self.failure: BaseException | None = None
        self.loop_ended = threading.Event()
        self.servers = servers
        self.tls_failure: ssl.SSLError | None = None
        self.tls_refused: set[tuple[str, int]] = set()
        self.tls_hopeless = threading.Event()

    def select(
        self, rlist: list[Any], wlist: list[Any], xlist: list[Any], timeout: float | None = None
    ) -> tuple[list[Any], list[Any], list[Any]]:
        return poll_select(rlist, wlist, xlist, timeout)

    def create_connection(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().create_connection(*args, **kwargs)
        except OSError as exc:  # refused, unreachable, TLS handshake (ssl.SSLError)...
            self.failure = exc
            if isinstance(exc, ssl.SSLError):
                self.tls_failure = exc
                self._note_tls_refusal(exc, kwargs)
            raise

    def telling_failure(self) -> BaseException | None:
        """The failure to report: a TLS refusal (actionable) over a later refused connection of
        another server that is down."""
        return self.tls_failure or self.failure

    def _note_tls_refusal(self, exc: ssl.SSLError, kwargs: dict[str, Any]) -> None:
        """A handshake failure is not transient: the same settings fail the same way. Once every
        server has failed one (or the client's own certificate/key is unusable, which no server
        can change), waiting for the connection timeout would only repeat it."""
        address = kwargs.get("address")
        port = address[1] if isinstance(address, tuple) and len(address) == 2 else None
        self.tls_refused.add((str(kwargs.get("hostname")), port if isinstance(port, int) else -1))
        if "PEM lib" in str(exc) or (self.servers and self.servers <= self.tls_refused):
            self.tls_hopeless.set()

    def spawn(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        if not isinstance(getattr(func, "__self__", None), ConnectionHandler):
            return super().spawn(func, *args, **kwargs)

        def connection_loop() -> None:
            try:
                func(*args, **kwargs)
            except Exception as exc:  # the client is closed by now (kazoo's own finally)
                self.failure = exc
                self.loop_ended.set()
                log.warning("ZooKeeper connection stopped: %s", _exception_text(exc))

        return super().spawn(connection_loop)


_READABLE = select.POLLIN | select.POLLPRI
_FAILED = select.POLLERR | select.POLLHUP | select.POLLNVAL


def poll_select(
    rlist: list[Any], wlist: list[Any], xlist: list[Any], timeout: float | None = None
) -> tuple[list[Any], list[Any], list[Any]]:
    """``select()`` for kazoo's connection thread, on ``poll(2)``.

    kazoo's own (``selector_select``) builds an epoll selector for every call: epoll_create,
    one epoll_ctl per socket, close. Its connection thread calls it once per request and once
    per response, so during a burst of KafkaTopic creations that was about a fifth of the
    operator's busy samples (py-spy, 1,000 topics). ``poll`` needs one system call and, unlike
    ``select(2)``, has no limit on descriptor numbers. A descriptor in error or hung up counts
    as ready for what was asked, as with kazoo's selectors, so the read or write that follows
    reports the failure. ``xlist`` is ignored, as kazoo's is. A closed socket (descriptor -1)
    raises ``ValueError``; kazoo's raises ``TypeError``, and its connection loop catches neither.
    """
    del xlist
    wanted: dict[int, int] = {}
    objects: dict[int, tuple[list[Any], list[Any]]] = {}
    for side, (fileobjs, mask) in enumerate(((rlist, _READABLE), (wlist, select.POLLOUT))):
        for fileobj in fileobjs:
            fd = fileobj if isinstance(fileobj, int) else fileobj.fileno()
            if fd < 0:
                raise ValueError("Invalid event mask or fd")
            wanted[fd] = wanted.get(fd, 0) | mask
            objects.setdefault(fd, ([], []))[side].append(fileobj)
    poller = select.poll()
    for fd, mask in wanted.items():
        poller.register(fd, mask)
    milliseconds = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
    readable: list[Any] = []
    writable: list[Any] = []
    for fd, happened in poller.poll(milliseconds):
        readers, writers = objects[fd]
        if happened & (_READABLE | _FAILED):
            readable.extend(readers)
        if happened & (select.POLLOUT | _FAILED):
            writable.extend(writers)
    return readable, writable, []


def _exception_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _no_passphrase() -> bytes:
    """The passphrase given to OpenSSL for an encrypted key when keyPasswordFile is not set."""
    return b""


def _tls_reason(exc: ssl.SSLError) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError) and exc.verify_message:
        return f"certificate verify failed: {exc.verify_message}"
    if "PEM lib" in str(exc):  # load_cert_chain: unreadable pair, or the key's passphrase
        return (
            "could not load the client certificate and key: certFile and keyFile must be a PEM "
            "certificate and its private key, and an encrypted keyFile needs its passphrase in "
            "keyPasswordFile"
        )
    reason = exc.reason or " ".join(str(exc).split()) or type(exc).__name__
    if "ALERT" in reason:  # sent by the server, e.g. ssl.clientAuth=need without a trusted certificate
        return (
            f"the server ended the handshake with {reason} (with ssl.clientAuth=need it wants a "
            "client certificate signed by a CA it trusts)"
        )
    return reason


def failure_message(settings: ZkConnectionSettings, failure: BaseException | None, auth_failed: bool) -> str:
    """One line for a session that could not be started, naming the settings to check.

    :param failure: what kazoo reported last (an exception, or None when nothing is known).
    :param auth_failed: kazoo saw the server refuse the login (its AUTH_FAILED state).
    """
    where = f"ZooKeeper at {settings.connect}"
    sasl = settings.sasl
    if sasl is None and isinstance(failure, kz.SessionClosedRequireSaslError):
        return (
            f"{where} requires SASL authentication and closed the session; add a sasl section "
            "with the brokers' ZooKeeper identity (their JAAS Client section) to this cluster"
        )
    gss = _gss_error(failure)
    if sasl is not None and gss is not None:
        return kerberos.failure_text(sasl, where, gss)
    if sasl is not None and isinstance(failure, kz.SASLException):
        cause = failure.__cause__ or failure
        return (
            f"SASL {sasl.mechanism} could not start for {where}: {_exception_text(cause)}; "
            "check the mechanism and that the pure-sasl package (and for GSSAPI, kerberos) is installed"
        )
    if auth_failed or isinstance(failure, kz.AuthFailedError | kz.SessionClosedRequireSaslError):
        if sasl is not None and sasl.mechanism == "GSSAPI":
            return (
                f"{where} refused the SASL GSSAPI login of {sasl.principal!r}: it could not accept the "
                f"Kerberos ticket; check that ZooKeeper's JAAS Server section logs in as "
                f"{sasl.service}/HOST@REALM (HOST as in the connect string) with that principal's current "
                "key, and that its authProvider is SASLAuthenticationProvider"
            )
        if sasl is not None:
            who = sasl.username or sasl.principal
            login = f"SASL {sasl.mechanism} login" + (f" of {who!r}" if who else "")
            return (
                f"{where} refused the {login}: wrong username or password, or a mechanism the "
                "server does not accept; the sasl files must hold the brokers' JAAS Client credentials"
            )
        return f"{where} refused the authentication data (digestAuthFile); check the user:password in it"
    if isinstance(failure, ssl.SSLError):
        return (
            f"TLS connection to {where} failed: {_tls_reason(failure)}; check tls.caFile, certFile "
            "and keyFile, and that the port is ZooKeeper's secureClientPort"
        )
    last = f" (last error: {_exception_text(failure)})" if failure is not None else ""
    return (
        f"cannot connect to {where} within {settings.connection_timeout_s:.0f} s{last}; check the "
        "connect string, network and credentials"
    )


class _StartWatch:
    """A state listener noting whether kazoo gave up connecting by itself while ``connect()``
    starts the session. It does so only when the login is refused (state AUTH_FAILED) or when an
    exception ended its connection thread (state CLOSED); listeners see both as LOST."""

    def __init__(self, client: KazooClient, handler: _WatchfulHandler) -> None:
        self.client = client
        self.handler = handler
        self.gave_up = threading.Event()
        self.auth_failed = False

    def __call__(self, state: str) -> None:
        if state == KazooState.LOST:
            self.auth_failed = self.client.client_state == KeeperState.AUTH_FAILED
            self.gave_up.set()

    def failure(self, default: BaseException | None) -> BaseException | None:
        if not self.gave_up.is_set():
            return default
        if not self.auth_failed:  # the thread's exception reaches the handler just after LOST
            self.handler.loop_ended.wait(2.0)
        return self.handler.failure or default


def connect(settings: ZkConnectionSettings) -> KazooClient:
    """Build and start a client and authenticate its session (for SASL GSSAPI, after a Kerberos
    login from the keytab: :func:`kerberos.login`).

    :raises ClusterUnavailable: unreachable within ``connection_timeout_s`` (with the last error
        seen), the login refused, SASL demanded but not configured, Kerberos failed, or TLS
        failed; one line.
    """
    servers = _servers(settings)
    if settings.sasl is not None and settings.sasl.mechanism == "GSSAPI":
        kerberos.login(settings.sasl, settings.connect, (host for host, _ in servers))
    handler = _WatchfulHandler(servers)
    client = build_client(settings, handler)
    batched_sends.install(client)
    watch = _StartWatch(client, handler)
    client.add_listener(watch)
    try:
        _start(client, settings, watch)
    except BaseException:
        client.stop()
        client.close()
        raise
    finally:
        client.remove_listener(watch)
    return client


#: A started session, as :func:`connect` returns it.
ZkSession: TypeAlias = KazooClient
#: States in which kazoo has stopped reconnecting for good (a refused login on a reconnect, or closed).
_GIVEN_UP = (KeeperState.AUTH_FAILED, KeeperState.CLOSED)


def has_given_up(client: ZkSession) -> bool:
    """kazoo will not reconnect this session any more: only a new one can reach ZooKeeper again."""
    return client.client_state in _GIVEN_UP


def on_connection_change(client: ZkSession, callback: Callable[[bool], None]) -> None:
    """Call ``callback(connected)`` whenever the session connects or loses its connection."""

    def listener(state: str) -> None:  # returns None: kazoo removes a listener that returns True
        callback(state == KazooState.CONNECTED)

    client.add_listener(listener)


def close(client: ZkSession) -> None:
    """End the session (its ephemeral znodes and watches go with it) and free its resources."""
    client.stop()
    client.close()


def _servers(settings: ZkConnectionSettings) -> frozenset[tuple[str, int]]:
    """The (host, port) pairs of the connect string, as kazoo names them when connecting."""
    try:
        servers, _ = collect_hosts(settings.hosts)
    except ValueError:  # checked by hosts_problem() before any connection; kazoo will say so too
        return frozenset()
    return frozenset((str(host), int(port)) for host, port in servers)


def _start(client: KazooClient, settings: ZkConnectionSettings, watch: _StartWatch) -> None:
    deadline = time.monotonic() + settings.connection_timeout_s
    live = client.start_async()
    while not live.wait(0.05):
        if watch.gave_up.is_set() or watch.handler.tls_hopeless.is_set() or time.monotonic() >= deadline:
            failure = watch.failure(watch.handler.telling_failure())
            raise errors.ClusterUnavailable(failure_message(settings, failure, watch.auth_failed))
    # kazoo logs in (SASL, then digest auth data) before it sends any request, so the answer to
    # the first one says whether the session is authenticated; kazoo's own start() asks the same.
    try:
        found = client.exists_async("/").get(timeout=max(deadline - time.monotonic(), 1.0))
    except (KazooTimeoutError, kz.ZookeeperError, kz.SASLException) as exc:
        failure = watch.failure(exc)
        raise errors.ClusterUnavailable(failure_message(settings, failure, watch.auth_failed)) from exc
    if client.chroot and found is None:
        warnings.warn(
            "No chroot path exists, the chroot path should be created before normal use.",
            UserWarning,
            stacklevel=3,
        )
