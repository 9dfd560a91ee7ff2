"""Unit tests for the broker registration codec ``/brokers/ids/<id>`` (v1-v5)."""

from __future__ import annotations

import json

import pytest

from kafka_zk_operator.adapters.zk import znodes
from kafka_zk_operator.domain import errors, model

PATH = "/brokers/ids/1"

# Reference §4.2 example (Kafka's own key order), and one per older version (ZkData docs).
V5 = (
    b'{"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT","SSL":"SSL"},'
    b'"endpoints":["PLAINTEXT://b1:9092","SSL://b1:9093"],"rack":"zone-a","jmx_port":-1,"features":{},'
    b'"host":"b1","timestamp":"1700000000000","port":9092,"version":5}'
)
V4 = (
    b'{"listener_security_protocol_map":{"CLIENT":"SSL","REPLICATION":"PLAINTEXT"},'
    b'"endpoints":["CLIENT://host1:9092","REPLICATION://host1:9093"],"rack":"dc1","jmx_port":9999,'
    b'"host":null,"timestamp":"2233345666","port":-1,"version":4}'
)
V3 = (
    b'{"endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"],"rack":"dc1","jmx_port":9999,'
    b'"host":"localhost","timestamp":"2233345666","port":9092,"version":3}'
)
V2 = (
    b'{"endpoints":["PLAINTEXT://host1:9092","SSL://host1:9093"],"jmx_port":9999,'
    b'"host":"localhost","timestamp":"2233345666","port":9092,"version":2}'
)
V1 = b'{"jmx_port":9999,"host":"localhost","timestamp":"2233345666","port":9092,"version":1}'


@pytest.mark.parametrize("data", [V1, V2, V3, V4, V5], ids=["v1", "v2", "v3", "v4", "v5"])
def test_every_version_round_trips_byte_exact(data: bytes) -> None:
    assert znodes.BrokerIdZNode.encode(znodes.BrokerIdZNode.decode(data, PATH)) == data


def test_v5_reference_example_decodes_every_field() -> None:
    reg = znodes.BrokerIdZNode.decode(V5, PATH)
    assert reg.id == 1
    assert (reg.version, reg.host, reg.port, reg.jmx_port, reg.timestamp) == (
        5,
        "b1",
        9092,
        -1,
        1700000000000,
    )
    assert reg.rack == "zone-a"
    assert reg.endpoints == (
        znodes.Endpoint("PLAINTEXT", "b1", 9092, "PLAINTEXT"),
        znodes.Endpoint("SSL", "b1", 9093, "SSL"),
    )
    assert dict(reg.listener_security_protocol_map or {}) == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"}
    assert dict(reg.features or {}) == {}
    assert reg.broker == model.Broker(1, "zone-a")


def test_v1_implies_one_plaintext_endpoint() -> None:
    reg = znodes.BrokerIdZNode.decode(V1, PATH)
    assert reg.endpoints == (znodes.Endpoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT"),)
    assert reg.rack is None and reg.listener_security_protocol_map is None and reg.features is None


def test_v4_custom_listeners_map_to_protocols_and_host_may_be_null() -> None:
    reg = znodes.BrokerIdZNode.decode(V4, PATH)
    assert [e.security_protocol for e in reg.endpoints] == ["SSL", "PLAINTEXT"]
    assert (reg.host, reg.port) == (None, -1)


def test_rack_null_means_no_rack() -> None:
    data = V5.replace(b'"rack":"zone-a"', b'"rack":null')
    assert znodes.BrokerIdZNode.decode(data, PATH).rack is None


def test_features_and_ipv6_endpoints() -> None:
    data = json.dumps(
        {
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "SASL_SSL"},
            "endpoints": ["PLAINTEXT://[::1]:9092", "INTERNAL://:9094"],
            "jmx_port": -1,
            "features": {"metadata.version": {"min_version": 1, "max_version": 21}},
            "host": "::1",
            "timestamp": "1",
            "port": 9092,
            "version": 5,
        }
    ).encode()
    reg = znodes.BrokerIdZNode.decode(data, PATH)
    assert reg.endpoints[0] == znodes.Endpoint("PLAINTEXT", "::1", 9092, "PLAINTEXT")
    assert reg.endpoints[1] == znodes.Endpoint("INTERNAL", None, 9094, "SASL_SSL")
    assert reg.endpoints[0].connection_string == "PLAINTEXT://[::1]:9092"
    assert reg.endpoints[1].connection_string == "INTERNAL://:9094"
    assert (reg.features or {})["metadata.version"] == znodes.SupportedFeatureRange(1, 21)
    assert json.loads(znodes.BrokerIdZNode.encode(reg)) == json.loads(data)


def test_unknown_keys_are_ignored() -> None:
    data = V5[:-1] + b',"future":{"x":1}}'
    assert znodes.BrokerIdZNode.decode(data, PATH).rack == "zone-a"


def test_paths() -> None:
    assert znodes.BrokerIdZNode.path(3) == "/brokers/ids/3"
    assert znodes.broker_id_from_path("/brokers/ids/1001") == 1001
    with pytest.raises(errors.InvalidSpec):
        znodes.broker_path(-1)


@pytest.mark.parametrize(
    "path", ["/brokers/ids/x", "/brokers/ids/01", "/brokers/ids/-1", "/brokers/topics/1", "1"]
)
def test_decode_needs_a_broker_path(path: str) -> None:
    with pytest.raises(errors.MalformedZnode, match="is not /brokers/ids/<broker id>"):
        znodes.BrokerIdZNode.decode(V5, path)


def _v5(**changes: object) -> bytes:
    doc = json.loads(V5)
    for key, value in changes.items():
        if value is _DROP:
            del doc[key]
        else:
            doc[key] = value
    return json.dumps(doc).encode()


_DROP = object()


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"{", "not valid JSON"),
        (_v5(version=0), "version 0 is not one Kafka writes here (1, 2, 3, 4, 5)"),
        (_v5(version=6), "version 6 is not one"),
        (_v5(jmx_port=_DROP), "has no 'jmx_port'"),
        (_v5(jmx_port="x"), "'jmx_port' is 'x' (a string), expected an integer"),
        (_v5(endpoints=_DROP), "has no 'endpoints'"),
        (_v5(endpoints="PLAINTEXT://b1:9092"), "'endpoints' is 'PLAINTEXT://b1:9092' (a string)"),
        (_v5(endpoints=["b1:9092"]), "endpoint 'b1:9092' is not LISTENER://host:port"),
        (_v5(endpoints=["PLAINTEXT://b1:99999"]), "outside 0..65535"),
        (_v5(endpoints=["OTHER://b1:9092"]), "no security protocol for listener 'OTHER'"),
        (_v5(listener_security_protocol_map={"PLAINTEXT": "TLS"}), "maps 'PLAINTEXT' to 'TLS'"),
        (_v5(rack=3), "'rack' is 3 (an integer), expected a string"),
        (_v5(timestamp=1700000000000), "'timestamp' is 1700000000000 (an integer), expected a string"),
        (_v5(timestamp="soon"), "'timestamp' is 'soon', expected epoch milliseconds"),
        (_v5(host=_DROP), "has no 'host'"),
        (_v5(port=70000), "'port' is 70000, outside"),
        (_v5(features=_DROP), "has no 'features'"),
        (_v5(features={"f": {"min_version": 3, "max_version": 2}}), "expected 0 <= min <= max"),
        (_v5(features={"f": {"max_version": 2}}), "'features' entry 'f' has no 'min_version'"),
        (_v5(version=4), "version 4 has 'features', which Kafka writes from version 5"),
        (_v5(version=2, features=_DROP, listener_security_protocol_map=_DROP), "version 2 has 'rack'"),
        (V1.replace(b'"host":"localhost"', b'"host":null'), "'host' is null, expected a string"),
        (V1[:-1] + b',"endpoints":[]}', "version 1 has 'endpoints'"),
    ],
)
def test_malformed_registrations_raise_naming_the_path(data: bytes, problem: str) -> None:
    with pytest.raises(errors.MalformedZnode) as caught:
        znodes.BrokerIdZNode.decode(data, PATH)
    assert caught.value.path == PATH
    assert problem in caught.value.problem


def test_encode_refuses_unknown_versions() -> None:
    reg = znodes.BrokerIdZNode.decode(V5, PATH)
    with pytest.raises(ValueError, match="not one Kafka writes"):
        znodes.BrokerIdZNode.encode(
            znodes.BrokerRegistration(
                reg.id, 9, reg.host, reg.port, reg.endpoints, reg.jmx_port, reg.timestamp
            )
        )


def test_encode_derives_the_protocol_map_when_absent() -> None:
    reg = znodes.BrokerIdZNode.decode(V3, PATH)
    as_v4 = znodes.BrokerRegistration(
        reg.id, 4, reg.host, reg.port, reg.endpoints, reg.jmx_port, reg.timestamp, rack=reg.rack
    )
    encoded = json.loads(znodes.BrokerIdZNode.encode(as_v4))
    assert encoded["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT", "SSL": "SSL"}
