"""Codec for broker registrations ``/brokers/ids/<id>`` (JSON v1-v5) → ``BrokerRegistration``.

Called by the ZooKeeper store adapter (through ``znodes``) to learn the live brokers, their racks and
listeners; the children of ``/brokers/ids`` are the live brokers. Brokers write these ephemeral
znodes themselves, so the operator only decodes them; ``encode`` exists for fakes and golden tests.
Pure: no ZooKeeper client. The broker epoch is the znode's czxid, which stays with the caller.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from kafka_zk_operator.adapters.zk import znodes_common as common
from kafka_zk_operator.domain import errors, model

BROKER_IDS_PATH: Final = "/brokers/ids"

#: v1 0.8 (host, port, jmx_port, timestamp); v2 0.9 (+endpoints); v3 0.10.0 (+rack);
#: v4 0.10.2 (+listener_security_protocol_map); v5 2.7 at IBP >= 2.7-IV0 (+features).
BROKER_ZNODE_VERSIONS: Final = (1, 2, 3, 4, 5)
_ENDPOINTS_SINCE: Final = 2
_RACK_SINCE: Final = 3
_PROTOCOL_MAP_SINCE: Final = 4
_FEATURES_SINCE: Final = 5

#: ``org.apache.kafka.common.security.auth.SecurityProtocol`` names.
SECURITY_PROTOCOLS: Final = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
#: Top-level ``port`` when the broker has no PLAINTEXT listener (``host`` is then null).
NO_PORT: Final = -1
#: ``jmx_port`` of a broker without JMX.
JMX_DISABLED: Final = -1
MAX_PORT: Final = 65535
#: Feature version levels are Java shorts.
MAX_FEATURE_LEVEL: Final = 32767

#: ``SocketServerConfigs.URI_PARSE_REGEXP``, matched against the whole endpoint string.
_ENDPOINT: Final = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")
#: Key order of Kafka's own output (Scala ``mutable.HashMap`` iteration order; absent keys skipped).
_KAFKA_KEY_ORDER: Final = (
    "listener_security_protocol_map",
    "endpoints",
    "rack",
    "jmx_port",
    "features",
    "host",
    "timestamp",
    "port",
    "version",
)


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One advertised listener: ``LISTENER://host:port`` plus the security protocol it maps to."""

    listener: str
    host: str | None
    port: int
    security_protocol: str

    @property
    def connection_string(self) -> str:
        """As Kafka writes it (``EndPoint.connectionString``): IPv6 hosts bracketed, no host → empty."""
        if self.host is None:
            host = ""
        elif ":" in self.host:
            host = f"[{self.host}]"
        else:
            host = self.host
        return f"{self.listener}://{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class SupportedFeatureRange:
    """A broker's supported range of one feature (``{"min_version":a,"max_version":b}``)."""

    min_version: int
    max_version: int


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """The content of ``/brokers/ids/<id>``; ``id`` comes from the path.

    For v1, ``endpoints`` is the implied single PLAINTEXT endpoint. ``listener_security_protocol_map``
    (v4+) and ``features`` (v5+) are ``None`` in versions that lack them.
    """

    id: model.BrokerId
    version: int
    host: str | None
    port: int
    endpoints: tuple[Endpoint, ...]
    jmx_port: int
    timestamp: int
    rack: str | None = None
    listener_security_protocol_map: Mapping[str, str] | None = None
    features: Mapping[str, SupportedFeatureRange] | None = None

    @property
    def broker(self) -> model.Broker:
        """What placement needs: the id and the rack."""
        return model.Broker(id=self.id, rack=self.rack)


def broker_path(broker_id: int) -> str:
    """``/brokers/ids/<id>``."""
    return f"{BROKER_IDS_PATH}/{common.broker_id_segment(broker_id)}"


def broker_id_from_path(path: str) -> int:
    """The id in ``/brokers/ids/<id>``; ``MalformedZnode`` if ``path`` is not such a path."""
    parent, _, name = path.rpartition("/")
    broker_id = common.parse_canonical_int(name)
    if parent != BROKER_IDS_PATH or broker_id is None or broker_id < 0:
        raise errors.MalformedZnode(path, f"is not {BROKER_IDS_PATH}/<broker id>")
    return broker_id


def _decode_protocol_map(value: object, path: str) -> dict[str, str]:
    obj = common.require_object(value, path, "'listener_security_protocol_map'")
    result: dict[str, str] = {}
    for listener, protocol in obj.items():
        text = common.as_str(protocol, path, f"'listener_security_protocol_map' entry '{listener}'")
        if text.upper() not in SECURITY_PROTOCOLS:
            raise errors.MalformedZnode(
                path,
                f"'listener_security_protocol_map' maps '{listener}' to '{text}', "
                f"not one of {sorted(SECURITY_PROTOCOLS)}",
            )
        result[listener.upper()] = text.upper()
    return result


def _decode_endpoint(value: object, path: str, protocols: Mapping[str, str] | None) -> Endpoint:
    text = common.as_str(value, path, "an 'endpoints' entry")
    match = _ENDPOINT.fullmatch(text)
    if match is None:
        raise errors.MalformedZnode(path, f"endpoint '{text}' is not LISTENER://host:port")
    listener, host, port_text = match.group(1).upper(), match.group(2), match.group(3)
    port = int(port_text)
    if not 0 <= port <= MAX_PORT:
        raise errors.MalformedZnode(path, f"endpoint '{text}' has port {port_text}, outside 0..{MAX_PORT}")
    if protocols is not None:
        protocol = protocols.get(listener)
    else:  # without a map, listener names are security protocol names
        protocol = listener if listener in SECURITY_PROTOCOLS else None
    if protocol is None:
        raise errors.MalformedZnode(
            path, f"endpoint '{text}': no security protocol for listener '{listener}'"
        )
    return Endpoint(listener=listener, host=host or None, port=port, security_protocol=protocol)


def _decode_features(value: object, path: str) -> dict[str, SupportedFeatureRange]:
    obj = common.require_object(value, path, "'features'")
    result: dict[str, SupportedFeatureRange] = {}
    for name, raw in obj.items():
        where = f"'features' entry '{name}' "
        entry = common.require_object(raw, path, f"'features' entry '{name}'")
        low = common.int32_field(entry, "min_version", path, where=where, minimum=0)
        high = common.int32_field(entry, "max_version", path, where=where, minimum=0)
        if high > MAX_FEATURE_LEVEL or high < low:
            raise errors.MalformedZnode(
                path,
                f"{where}has min_version {low} and max_version {high}, expected 0 <= min <= max <= 32767",
            )
        result[name] = SupportedFeatureRange(min_version=low, max_version=high)
    return result


def _reject_newer_fields(obj: Mapping[str, object], path: str, version: int) -> None:
    for key, since in (
        ("endpoints", _ENDPOINTS_SINCE),
        ("rack", _RACK_SINCE),
        ("listener_security_protocol_map", _PROTOCOL_MAP_SINCE),
        ("features", _FEATURES_SINCE),
    ):
        if key in obj and version < since:
            raise errors.MalformedZnode(
                path, f"version {version} has '{key}', which Kafka writes from version {since}"
            )


class BrokerIdZNode:
    """``/brokers/ids/<id>`` ↔ ``BrokerRegistration``.

    Format (``ZkData :: BrokerIdZNode``; v5 shown in Kafka's key order)::

        {"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},
         "endpoints":["PLAINTEXT://b1:9092","SSL://b1:9093"],"rack":"zone-a","jmx_port":-1,
         "features":{},"host":"b1","timestamp":"1700000000000","port":9092,"version":5}
        v1 {"version":1,"host":"b1","port":9092,"jmx_port":-1,"timestamp":"1700000000000"}

    ``host``/``port`` are the first PLAINTEXT endpoint, else null/-1; ``rack`` only when set (absent or
    null → ``None``). Unknown keys are ignored (the znode is never rewritten by us).
    """

    @staticmethod
    def path(broker_id: int) -> str:
        return broker_path(broker_id)

    @staticmethod
    def decode(data: bytes | None, path: str) -> BrokerRegistration:
        """:raises MalformedZnode: bad path, unknown version, missing or mistyped fields, fields newer
        than the version, unparsable endpoints or protocols, bad feature ranges."""
        broker_id = broker_id_from_path(path)
        obj = common.load_json_object(data, path)
        version = common.version_field(obj, path, BROKER_ZNODE_VERSIONS)
        _reject_newer_fields(obj, path, version)
        common.field(obj, "host", path)  # always written; null from v2 when there is no PLAINTEXT listener
        port = common.int32_field(obj, "port", path, minimum=NO_PORT if version > 1 else 0)
        if port > MAX_PORT:
            raise errors.MalformedZnode(path, f"'port' is {port}, outside 0..{MAX_PORT}")

        protocols = None
        if "listener_security_protocol_map" in obj:
            protocols = _decode_protocol_map(obj["listener_security_protocol_map"], path)
        host: str | None
        if version == 1:
            host = common.str_field(obj, "host", path)
            endpoints: tuple[Endpoint, ...] = (Endpoint("PLAINTEXT", host, port, "PLAINTEXT"),)
        else:
            host = common.optional_str_field(obj, "host", path)
            raw_endpoints = common.require_list(common.field(obj, "endpoints", path), path, "'endpoints'")
            endpoints = tuple(_decode_endpoint(item, path, protocols) for item in raw_endpoints)

        features = None
        if version >= _FEATURES_SINCE:
            features = MappingProxyType(_decode_features(common.field(obj, "features", path), path))
        return BrokerRegistration(
            id=broker_id,
            version=version,
            host=host,
            port=port,
            endpoints=endpoints,
            jmx_port=common.int32_field(obj, "jmx_port", path, minimum=JMX_DISABLED),
            timestamp=common.timestamp_field(obj, path),
            rack=common.optional_str_field(obj, "rack", path),
            listener_security_protocol_map=None if protocols is None else MappingProxyType(protocols),
            features=features,
        )

    @staticmethod
    def encode(registration: BrokerRegistration) -> bytes:
        """Kafka's JSON for ``registration.version``, keys in Kafka's order. For fakes and tests only.

        :raises ValueError: unknown version.
        """
        version = registration.version
        if version not in BROKER_ZNODE_VERSIONS:
            raise ValueError(
                f"broker znode version {version} is not one Kafka writes {BROKER_ZNODE_VERSIONS}"
            )
        fields: dict[str, object] = {
            "jmx_port": registration.jmx_port,
            "host": registration.host,
            "timestamp": str(registration.timestamp),
            "port": registration.port,
            "version": version,
        }
        if version >= _ENDPOINTS_SINCE:
            fields["endpoints"] = [endpoint.connection_string for endpoint in registration.endpoints]
        if version >= _RACK_SINCE and registration.rack is not None:
            fields["rack"] = registration.rack
        if version >= _PROTOCOL_MAP_SINCE:
            protocols = registration.listener_security_protocol_map
            if protocols is None:
                protocols = {e.listener: e.security_protocol for e in registration.endpoints}
            fields["listener_security_protocol_map"] = dict(protocols)
        if version >= _FEATURES_SINCE:
            fields["features"] = {
                name: {"min_version": r.min_version, "max_version": r.max_version}
                for name, r in (registration.features or {}).items()
            }
        return common.dump_json({key: fields[key] for key in _KAFKA_KEY_ORDER if key in fields})
