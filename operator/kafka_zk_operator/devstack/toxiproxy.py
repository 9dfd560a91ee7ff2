"""Toxiproxy for fault tests: a managed ``toxiproxy-server`` and a small client of its HTTP API.

Toxiproxy (github.com/Shopify/toxiproxy) is a TCP proxy whose links can be given *toxics*: added
latency, a bandwidth cap, a connection reset, a stall, sliced packets, a data cap. A fault test puts
a proxy between a client and a real server (ZooKeeper, a Kafka broker), points the client at the
proxy, and then degrades the link or takes the proxy down (``Proxy.disable``) while the real
components keep running. The server binary is built once from its Go module
(``artifacts.toxiproxy_binary``); the API used here is the one its README documents ("HTTP API")
for ``artifacts.TOXIPROXY_MODULE_VERSION``.

Toxic kinds and their attributes (times in milliseconds unless said otherwise):

- ``latency``: ``latency``, ``jitter``
- ``bandwidth``: ``rate`` (KB/s)
- ``slow_close``: ``delay``
- ``timeout``: ``timeout`` (stop all data, close after it; 0: never close)
- ``reset_peer``: ``timeout`` (reset the connection, with TCP RST, that long after data arrives)
- ``slicer``: ``average_size``, ``size_variation`` (bytes), ``delay`` (microseconds)
- ``limit_data``: ``bytes`` (close the connection once that much has passed)

A toxic acts on one direction: ``downstream`` is server -> client, ``upstream`` client -> server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from kafka_zk_operator.devstack import artifacts, ports
from kafka_zk_operator.devstack.errors import StackError
from kafka_zk_operator.devstack.processes import ManagedProcess, wait_until

#: Talks to the loopback API directly, whatever HTTP(S)_PROXY the environment names.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

ToxicKind = Literal["latency", "bandwidth", "slow_close", "timeout", "reset_peer", "slicer", "limit_data"]
Stream = Literal["upstream", "downstream"]


@dataclass(frozen=True)
class Toxic:
    """A toxic as the server reports it."""

    name: str
    kind: str
    stream: str
    toxicity: float
    attributes: Mapping[str, int]

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> Toxic:
        return cls(
            name=str(data["name"]),
            kind=str(data["type"]),
            stream=str(data["stream"]),
            toxicity=float(data["toxicity"]),
            attributes=dict(data.get("attributes") or {}),
        )


class ToxiproxyClient:
    """The HTTP API of one Toxiproxy server. Every failure raises ``StackError``."""

    def __init__(self, api_port: int, host: str = ports.LOOPBACK, timeout: float = 10.0) -> None:
        self.base_url = f"http://{host}:{api_port}"
        self.timeout = timeout

    def version(self) -> str:
        answer = self.request("GET", "/version")
        return str(answer["version"])

    def create_proxy(self, name: str, listen_port: int, upstream: str, *, enabled: bool = True) -> Proxy:
        """A proxy listening on 127.0.0.1:``listen_port`` (0: a port the server picks) that forwards
        to ``upstream`` (``host:port``)."""
        body = {
            "name": name,
            "listen": f"{ports.LOOPBACK}:{listen_port}",
            "upstream": upstream,
            "enabled": enabled,
        }
        return self._proxy(self.request("POST", "/proxies", body, expect=(201,)))

    def proxy(self, name: str) -> Proxy:
        return self._proxy(self.request("GET", _proxy_path(name)))

    def proxies(self) -> list[Proxy]:
        answer = self.request("GET", "/proxies")
        return [self._proxy(data) for data in answer.values()]

    def reset(self) -> None:
        """Remove every toxic of every proxy and enable every proxy."""
        self.request("POST", "/reset", expect=(204,))

    def _proxy(self, data: Mapping[str, Any]) -> Proxy:
        return Proxy(
            client=self,
            name=str(data["name"]),
            listen=str(data["listen"]),
            upstream=str(data["upstream"]),
            enabled=bool(data["enabled"]),
        )

    def request(
        self, method: str, path: str, body: Mapping[str, Any] | None = None, expect: tuple[int, ...] = (200,)
    ) -> Any:
        """One API call; its decoded JSON answer (``None`` when empty).

        :raises StackError: the server cannot be reached or answers another status than ``expect``.
        """
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base_url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with _OPENER.open(request, timeout=self.timeout) as response:
                status: int = response.status
                text = response.read().decode(errors="replace")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace").strip()
            raise StackError(f"Toxiproxy {method} {path} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise StackError(
                f"could not reach Toxiproxy at {self.base_url} ({method} {path}): {reason}"
            ) from exc
        if status not in expect:
            raise StackError(f"Toxiproxy {method} {path} answered HTTP {status}: {text.strip()}")
        return json.loads(text) if text.strip() else None


@dataclass
class Proxy:
    """One proxy of a Toxiproxy server; ``listen`` and ``enabled`` as of the last answer."""

    client: ToxiproxyClient = field(repr=False)
    name: str
    listen: str
    upstream: str
    enabled: bool

    @property
    def listen_port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])

    @property
    def address(self) -> str:
        """``127.0.0.1:port`` to point clients at."""
        return f"{ports.LOOPBACK}:{self.listen_port}"

    def add_toxic(
        self,
        kind: ToxicKind,
        attributes: Mapping[str, int] | None = None,
        *,
        stream: Stream = "downstream",
        toxicity: float = 1.0,
        name: str | None = None,
    ) -> Toxic:
        """Add a toxic (named ``<kind>_<stream>`` unless ``name`` is given); it acts on the open
        connections as well as on new ones."""
        body: dict[str, Any] = {
            "type": kind,
            "stream": stream,
            "toxicity": toxicity,
            "attributes": dict(attributes or {}),
        }
        if name is not None:
            body["name"] = name
        return Toxic.from_api(self.client.request("POST", f"{_proxy_path(self.name)}/toxics", body))

    def toxics(self) -> list[Toxic]:
        answer = self.client.request("GET", f"{_proxy_path(self.name)}/toxics")
        return [Toxic.from_api(data) for data in answer or []]

    def remove_toxic(self, name: str) -> None:
        path = f"{_proxy_path(self.name)}/toxics/{urllib.parse.quote(name, safe='')}"
        self.client.request("DELETE", path, expect=(204,))

    def disable(self) -> None:
        """Take the proxy down: its open connections are closed and new ones refused."""
        self._update(enabled=False)

    def enable(self) -> None:
        """Bring the proxy back up (listening on the same port)."""
        self._update(enabled=True)

    def delete(self) -> None:
        self.client.request("DELETE", _proxy_path(self.name), expect=(204,))

    def _update(self, **fields: Any) -> None:
        updated = self.client._proxy(self.client.request("PATCH", _proxy_path(self.name), fields))
        self.listen, self.upstream, self.enabled = updated.listen, updated.upstream, updated.enabled


def _proxy_path(name: str) -> str:
    return f"/proxies/{urllib.parse.quote(name, safe='')}"


@dataclass
class ToxiproxyServer:
    """A ``toxiproxy-server`` whose HTTP API listens on 127.0.0.1:``api_port`` (logs in ``workdir``)."""

    workdir: Path
    api_port: int
    #: The server binary; built from its Go module on first use when not given.
    binary: Path | None = None
    process: ManagedProcess | None = None

    @property
    def client(self) -> ToxiproxyClient:
        return ToxiproxyClient(self.api_port)

    def start(self) -> None:
        binary = self.binary or artifacts.toxiproxy_binary()
        self.workdir.mkdir(parents=True, exist_ok=True)
        argv = [str(binary), "-host", ports.LOOPBACK, "-port", str(self.api_port)]
        self.process = ManagedProcess("toxiproxy", argv, self.workdir / "toxiproxy.log")
        self.process.start()

    def is_serving(self) -> bool:
        try:
            self.client.version()
        except StackError:
            return False
        return True

    def wait_ready(self, timeout: float = 15.0) -> None:
        wait_until(self.is_serving, timeout=timeout, what="Toxiproxy to serve", process=self.process)

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(timeout=5.0)
