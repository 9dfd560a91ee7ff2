"""Unit tests for ``config.load``: every bad KZO_* value or clusters file is one ``SettingsError`` line.

``kzo operator`` prints that line and exits 2 (see ``test_cli_errors``); nothing else may escape
``load``. Each case names the variable or key, what is wrong and what is expected. Valid input
(the documented file, what the Helm chart, ``kzo dev`` and the e2e stack pass) keeps loading.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kafka_zk_operator.cli.zk_reading import connect_string
from kafka_zk_operator.config import OperatorSettings, SettingsError, load
from kafka_zk_operator.config import zookeeper as zk_settings

CLUSTER = "clusters:\n  - name: main\n    zookeeper: zk:2181/kafka\n"


def _file(tmp_path: Path, content: str | bytes, name: str = "clusters.yaml") -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return str(path)


def _error(env: dict[str, str]) -> str:
    with pytest.raises(SettingsError) as raised:
        load(env)
    message = str(raised.value)
    assert message and "\n" not in message, message
    return message


def _file_error(tmp_path: Path, content: str | bytes) -> str:
    return _error({"KZO_CLUSTERS_FILE": _file(tmp_path, content)})


def _zk(**extra: str) -> dict[str, str]:
    return {"KZO_ZOOKEEPER": "zk:2181/kafka", **extra}


# --- valid configurations keep loading ------------------------------------------------------------


def test_the_documented_clusters_file_loads(tmp_path: Path) -> None:
    secrets = {"username": "kafka\n", "password": "s3cret\r\n", "digest": "super:pw\n"}
    paths = {key: _file(tmp_path, value, key) for key, value in secrets.items()}
    clusters_file = _file(
        tmp_path,
        f"""\
clusters:
  - name: main
    zookeeper: zk-0.zk:2181,zk-1.zk:2181/kafka
    sessionTimeoutSeconds: 18
    secureAcls: false
    sasl:
      mechanism: DIGEST-MD5
      usernameFile: {paths["username"]}
      passwordFile: {paths["password"]}
    digestAuthFile: {paths["digest"]}
    tls:
      caFile: /etc/kzo/zk-tls/ca.crt
      certFile: /etc/kzo/zk-tls/tls.crt
      keyFile: /etc/kzo/zk-tls/tls.key
  - name: legacy
    zookeeper: " [::1]:2182/legacy "
    sessionTimeoutSeconds: "12.5"
    secureAcls: true
    tls: {{verify: false}}
defaultCluster: main
""",
    )
    settings = load({"KZO_CLUSTERS_FILE": clusters_file})
    main, legacy = settings.clusters
    assert settings.default_cluster == "main"
    assert main.zk.connect == "zk-0.zk:2181,zk-1.zk:2181/kafka"
    assert main.zk.session_timeout_s == 18.0
    assert main.zk.sasl is not None
    assert (main.zk.sasl.username, main.zk.sasl.password) == ("kafka", "s3cret")
    assert main.zk.digest_auth == ("super:pw",)
    assert main.zk.tls is not None and main.zk.tls.verify_certs is True
    assert legacy.zk.connect == "[::1]:2182/legacy"
    assert legacy.zk.session_timeout_s == 12.5
    assert legacy.zk.secure_acls is True
    assert legacy.zk.tls is not None and legacy.zk.tls.verify_certs is False


def test_defaults_apply_when_only_a_zookeeper_is_set() -> None:
    settings = load({"KZO_ZOOKEEPER": "127.0.0.1:2181/kafka"})
    assert settings == OperatorSettings(clusters=settings.clusters)
    assert settings.clusters[0].name == "default"
    assert settings.clusters[0].zk.connect == "127.0.0.1:2181/kafka"
    assert settings.clusters[0].zk.session_timeout_s == 18.0


def test_empty_values_mean_the_defaults() -> None:
    keys = [
        "KZO_NAMESPACES",
        "KZO_RESYNC_SECONDS",
        "KZO_METRICS_PORT",
        "KZO_HEALTH_PORT",
        "KZO_CREATE_WAIT_SECONDS",
        "KZO_CREATE_BATCH_SECONDS",
        "KZO_WORKER_THREADS",
        "KZO_STATUS_HEARTBEAT_SECONDS",
        "KZO_REASSIGNMENT_POLL_SECONDS",
        "KZO_REASSIGNMENT_STUCK_SECONDS",
        "KZO_CLUSTER_NAME",
    ]
    settings = load(_zk(**dict.fromkeys(keys, "")))
    assert settings == OperatorSettings(clusters=settings.clusters)
    assert settings.clusters[0].name == "default"


def test_what_kzo_dev_and_the_e2e_operator_pass_is_accepted(tmp_path: Path) -> None:
    # devstack.operator_process + cli.dev_cmd
    settings = load(
        {
            "KZO_ZOOKEEPER": "127.0.0.1:21810/kafka",
            "KZO_CLUSTER_NAME": "local",
            "KZO_RESYNC_SECONDS": "5",
            "KZO_METRICS_PORT": "43210",
            "KZO_HEALTH_PORT": "43211",
            "KZO_CREATE_WAIT_SECONDS": "10",
            "KZO_REASSIGNMENT_POLL_SECONDS": "1",
        }
    )
    assert (settings.resync_seconds, settings.metrics_port, settings.health_port) == (5.0, 43210, 43211)
    # tests/e2e: a clusters file wins over KZO_ZOOKEEPER, which they set to "" (or "unused")
    clusters_file = _file(
        tmp_path,
        "clusters:\n  - name: main\n    zookeeper: 127.0.0.1:21810/kafka\n"
        "  - name: no-delete\n    zookeeper: 127.0.0.1:21810/kafka-no-delete-1a2b3c\n"
        "defaultCluster: main\n",
    )
    for zookeeper in ("", "unused"):
        settings = load(
            {"KZO_CLUSTERS_FILE": clusters_file, "KZO_ZOOKEEPER": zookeeper, "KZO_NAMESPACES": "kzo-e2e-1a2b"}
        )
        assert [c.name for c in settings.clusters] == ["main", "no-delete"]
        assert settings.namespaces == ("kzo-e2e-1a2b",)


def test_what_the_helm_chart_renders_is_accepted(tmp_path: Path) -> None:
    env = {
        "KZO_CLUSTERS_FILE": _file(
            tmp_path, "clusters:\n- name: main\n  zookeeper: zookeeper.kafka.svc:2181/kafka\n"
        ),
        "KZO_NAMESPACES": "team-a,team-b",
        "KZO_RESYNC_SECONDS": "60",
        "KZO_CONFIG_DRIFT": "revert",
        "KZO_DELETED_TOPIC_DRIFT": "recreate",
        "KZO_CREATE_WAIT_SECONDS": "10",
        "KZO_HEALTH_PORT": "8080",
        "KZO_METRICS_PORT": "0",
    }
    settings = load(env)
    assert settings.namespaces == ("team-a", "team-b")
    assert (settings.metrics_port, settings.health_port) == (0, 8080)


@pytest.mark.parametrize(
    ("key", "value", "attribute", "expected"),
    [
        ("KZO_METRICS_PORT", "0", "metrics_port", 0),  # 0 disables /metrics
        ("KZO_METRICS_PORT", "65535", "metrics_port", 65535),
        ("KZO_HEALTH_PORT", "1", "health_port", 1),
        ("KZO_HEALTH_PORT", " 8081.0 ", "health_port", 8081),
        ("KZO_CREATE_WAIT_SECONDS", "0", "create_wait_seconds", 0.0),  # 0: no in-line wait
        ("KZO_CREATE_BATCH_SECONDS", "0", "create_batch_seconds", 0.0),  # 0: each create alone
        ("KZO_CREATE_BATCH_SECONDS", "0.5", "create_batch_seconds", 0.5),
        ("KZO_WORKER_THREADS", "64", "worker_threads", 64),
        ("KZO_WORKER_THREADS", "1", "worker_threads", 1),
        ("KZO_STATUS_HEARTBEAT_SECONDS", "0", "status_heartbeat_seconds", 0.0),
        ("KZO_RESYNC_SECONDS", "0.5", "resync_seconds", 0.5),
        ("KZO_NAMESPACES", " kafka , a-b ,", "namespaces", ("kafka", "a-b")),
        ("KZO_NAMESPACES", "a" * 63, "namespaces", ("a" * 63,)),
    ],
)
def test_edge_values_that_make_sense_are_accepted(
    key: str, value: str, attribute: str, expected: object
) -> None:
    assert getattr(load(_zk(**{key: value})), attribute) == expected


@pytest.mark.parametrize(
    "connect",
    ["zk:2181", "zk-0:2181,zk-1:2181,zk-2:2181/kafka", "10.0.0.1:2181/a/b", "[::1]:2181/kafka", "zk:2181/"],
)
def test_valid_connect_strings_are_accepted(connect: str) -> None:
    assert load({"KZO_ZOOKEEPER": connect}).clusters[0].zk.connect == connect


# --- 1. clusters items that are not mappings -------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "got"),
    [
        ("clusters:\n  - 42\n", "got the number 42"),
        ("clusters:\n  - main\n", "got the string 'main'"),
        ("a: &a [*a]\nclusters: *a\n", "got a list"),
    ],
)
def test_a_clusters_item_that_is_not_a_mapping(tmp_path: Path, content: str, got: str) -> None:
    message = _file_error(tmp_path, content)
    assert "clusters[0] must be a mapping with 'name' and 'zookeeper' (or, for a KRaft cluster" in message
    assert got in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("clusters: main\n", "must have a 'clusters' list"),
        ("- main\n", "must have a 'clusters' list"),
        ("", "must have a 'clusters' list"),
        ("clusters: []\n", "'clusters' is empty; list at least one cluster"),
        (CLUSTER + "defaultCluster: other\n", "defaultCluster 'other' is not one of ['main']"),
        (CLUSTER + "defaultCluster: [main]\n", "defaultCluster ['main'] is not one of ['main']"),
        (CLUSTER + "  - name: main\n    zookeeper: zk2:2181\n", "cluster names must be unique"),
        ("clusters:\n  - zookeeper: zk:2181\n", "clusters[0].name must be a non-empty string"),
        ("clusters:\n  - name: main\n", "clusters[0] needs zookeeper, the brokers' zookeeper.connect"),
    ],
)
def test_a_clusters_file_with_the_wrong_shape(tmp_path: Path, content: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, content)


# --- 2. sessionTimeoutSeconds ----------------------------------------------------------------------


@pytest.mark.parametrize("value", ["abc", "[1]", ".nan", ".inf", "-5", "0", "true", "1e400", "{}", "3000000"])
def test_a_session_timeout_must_be_a_positive_finite_number(tmp_path: Path, value: str) -> None:
    message = _file_error(tmp_path, CLUSTER + f"    sessionTimeoutSeconds: {value}\n")
    assert "clusters[0].sessionTimeoutSeconds must be a positive finite number of seconds" in message


# --- 3. *File settings and other typed keys --------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("    sasl: {usernameFile: [1]}\n", "clusters[0].sasl.usernameFile must be the path of a file"),
        ("    sasl: {passwordFile: 5}\n", "clusters[0].sasl.passwordFile must be the path of a file"),
        ("    digestAuthFile: {a: 1}\n", "clusters[0].digestAuthFile must be the path of a file"),
        ("    digestAuthFile: ''\n", "clusters[0].digestAuthFile must be the path of a file"),
        ('    digestAuthFile: "a\\0b"\n', "clusters[0].digestAuthFile: 'a\\x00b' is not a usable file path"),
        ("    sasl: {passwordFile: /nonexistent/kzo/pw}\n", "cannot read /nonexistent/kzo/pw"),
        ("    sasl: {mechanism: [1]}\n", "clusters[0].sasl.mechanism must be a string"),
        ("    sasl: {username: 42}\n", "clusters[0].sasl.username must be a string"),
        ("    tls: {caFile: 5}\n", "clusters[0].tls.caFile must be a string"),
        ("    sasl: yes\n", "clusters[0].sasl must be a mapping"),
        ("    tls: [a]\n", "clusters[0].tls must be a mapping"),
        ("    secureAcls: 'false'\n", "clusters[0].secureAcls must be true or false"),
        ("    tls: {verify: 'no'}\n", "clusters[0].tls.verify must be true or false"),
    ],
)
def test_a_setting_of_the_wrong_type(tmp_path: Path, snippet: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, CLUSTER + snippet)


# --- 4. bytes that are not UTF-8 -------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"\xff\xfe", b"clusters:\n  - name: \xe9\n"])
def test_a_clusters_file_that_is_not_utf8(tmp_path: Path, content: bytes) -> None:
    message = _file_error(tmp_path, content)
    assert message.startswith("KZO_CLUSTERS_FILE: ")
    assert "is not UTF-8 text" in message and "save it as UTF-8" in message


def test_a_secret_file_that_is_not_utf8(tmp_path: Path) -> None:
    secret = _file(tmp_path, b"\xffpw", "password")
    message = _file_error(tmp_path, CLUSTER + f"    sasl: {{passwordFile: {secret}}}\n")
    assert "clusters[0].sasl.passwordFile" in message and "is not UTF-8 text" in message


def test_an_unreadable_clusters_file(tmp_path: Path) -> None:
    message = _error({"KZO_CLUSTERS_FILE": str(tmp_path / "missing.yaml")})
    assert "KZO_CLUSTERS_FILE: cannot read" in message and "No such file or directory" in message


# --- 5. YAML that does not parse -------------------------------------------------------------------


def test_truncated_yaml_is_one_line_with_line_and_column(tmp_path: Path) -> None:
    message = _file_error(tmp_path, "clusters: [\n  - name: a")
    assert "invalid YAML at line 2, column 3: expected the node content, but found '-'" in message
    assert message.endswith("fix the file's syntax")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("clusters:\n  - name: a\n   zookeeper: x\n", "invalid YAML at line 3, column 4"),
        ("clusters: *nowhere\n", "invalid YAML at line 1, column 11: found undefined alias 'nowhere'"),
        ("{[1]: 2}\n", "found unhashable key"),
        ("clusters:\n  - name: a\n    zookeeper: !!int abc\n", "invalid YAML: invalid literal for int()"),
        ("clusters: !!bool maybe\n", "invalid YAML"),
        ("clusters: !!timestamp x\n", "invalid YAML"),
        ("\x01", "invalid YAML at character 0: unacceptable character #x0001"),
        ("[" * 5000, "invalid YAML: nested too deeply"),
    ],
)
def test_other_unparsable_yaml_is_one_line(tmp_path: Path, content: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, content)


# --- 6. ports --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value", ["nan", "inf", "-inf", "-1", "99999", "65536", "1e30", "80.5", "http", "0x50"]
)
@pytest.mark.parametrize("key", ["KZO_METRICS_PORT", "KZO_HEALTH_PORT"])
def test_a_port_must_be_an_integer_in_range(key: str, value: str) -> None:
    message = _error(_zk(**{key: value}))
    assert message.startswith(f"{key}={value!r} is not a TCP port: use an integer ")


def test_metrics_port_0_disables_but_health_port_0_is_refused() -> None:
    assert load(_zk(KZO_METRICS_PORT="0")).metrics_port == 0
    assert _error(_zk(KZO_HEALTH_PORT="0")) == (
        "KZO_HEALTH_PORT='0' is not a TCP port: use an integer 1-65535 (default 8080)"
    )


# --- 7. periods in seconds -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "KZO_RESYNC_SECONDS",
        "KZO_CREATE_WAIT_SECONDS",
        "KZO_CREATE_BATCH_SECONDS",
        "KZO_STATUS_HEARTBEAT_SECONDS",
        "KZO_REASSIGNMENT_POLL_SECONDS",
        "KZO_REASSIGNMENT_STUCK_SECONDS",
    ],
)
@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e400", "-1", "-0.5", "abc", "1,5"])
def test_a_period_must_be_a_finite_non_negative_number(key: str, value: str) -> None:
    message = _error(_zk(**{key: value}))
    assert message.startswith(f"{key}={value!r} is not a valid number of seconds: use a number ")
    assert "or leave it unset for the default" in message


@pytest.mark.parametrize("key", ["KZO_RESYNC_SECONDS", "KZO_REASSIGNMENT_POLL_SECONDS"])
def test_a_timer_period_of_zero_is_refused(key: str) -> None:
    assert "use a number > 0" in _error(_zk(**{key: "0"}))


@pytest.mark.parametrize("key", ["KZO_RESYNC_SECONDS", "KZO_REASSIGNMENT_POLL_SECONDS"])
def test_a_blank_period_read_again_by_a_handler_at_import_is_refused(key: str) -> None:
    # handlers do float(value or default) at import: "  " would crash there, so it is refused here
    assert _error(_zk(**{key: "  "})).startswith(f"{key}='  ' is not a valid number of seconds")


# --- 8. ZooKeeper connect strings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("connect", "problem"),
    [
        (":", "':' is not HOST or HOST:PORT"),
        ("not a host!:x", "'not a host!:x' is not HOST or HOST:PORT"),
        ("zk:99999", "port 99999 is not in 1-65535"),
        ("zk:0/kafka", "port 0 is not in 1-65535"),
        ("zk:2181,", "'' is not HOST or HOST:PORT"),
        ("zk:2181/kafka//x", "the chroot '/kafka//x' has an empty segment"),
        ("zk/kafka", "no HOST:PORT in it"),
    ],
)
def test_an_invalid_connect_string_is_refused(tmp_path: Path, connect: str, problem: str) -> None:
    assert _error({"KZO_ZOOKEEPER": connect}) == (
        f"KZO_ZOOKEEPER={connect!r} is not a ZooKeeper connect string ({problem}); "
        "expected HOST:PORT[,HOST:PORT...][/CHROOT], e.g. 'zk-0:2181,zk-1:2181/kafka'"
    )
    message = _file_error(tmp_path, f"clusters:\n  - name: main\n    zookeeper: {connect!r}\n")
    assert f"clusters[0].zookeeper={connect!r} is not a ZooKeeper connect string ({problem})" in message


@pytest.mark.parametrize(
    "connect",
    [
        "zk:2181",
        "a:1,b:2/c",
        "[::1]:2181/kafka",
        ":",
        "not a host!:x",
        "zk:99999",
        "zk:2181/a//b",
        "zk:2181,",
        "h_1:2181/",
    ],
)
def test_connect_strings_follow_the_cli_rules(connect: str) -> None:
    """Same verdict as ``kzo snapshot --zookeeper`` (config also keeps its older rule: some ':')."""
    try:
        connect_string(connect)
        cli_accepts = True
    except argparse.ArgumentTypeError:
        cli_accepts = False
    try:
        load({"KZO_ZOOKEEPER": connect})
        operator_accepts = True
    except SettingsError:
        operator_accepts = False
    assert operator_accepts == cli_accepts


# --- 9. namespaces ---------------------------------------------------------------------------------


@pytest.mark.parametrize("namespace", ["Kafka", "team_a", "-a", "a-", "a.b", "a" * 64, "ns/1", "kä"])
def test_a_namespace_must_be_an_rfc1123_label(namespace: str) -> None:
    message = _error(_zk(KZO_NAMESPACES=f"kafka,{namespace}"))
    assert message.startswith(f"KZO_NAMESPACES entry {namespace!r:.77}")
    assert "is not a Kubernetes namespace name" in message


# --- no other exception escapes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "clusters: [{name: a, zookeeper: 'zk:2181', sasl: {principal: {}}}]",
        "clusters: [{name: a, zookeeper: 'zk:2181', sessionTimeoutSeconds: !!binary AAAA}]",
        "clusters: [{name: [a], zookeeper: 'zk:2181'}]",
        "clusters: [{name: a, zookeeper: [zk:2181]}]",
        "clusters: [{name: a, zookeeper: 'zk:2181'}]\ndefaultCluster: {a: 1}",
        "clusters: [{name: a, zookeeper: 'zk:2181', sessionTimeoutSeconds: 100000000000000000000000}]",
        "\ufeffclusters: [{name: a, zookeeper: 'zk:2181', tls: {verify: 1}}]",
    ],
)
def test_odd_documents_give_a_settings_error(tmp_path: Path, content: str) -> None:
    _file_error(tmp_path, content)


# --- 5. SASL and TLS sections that kazoo could not use ----------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (
            "    sasl: {mechanism: PLAIN}\n",
            "clusters[0].sasl.mechanism 'PLAIN' is not a ZooKeeper SASL mechanism",
        ),
        (
            "    sasl: {username: kafka}\n",
            "clusters[0].sasl: DIGEST-MD5 needs usernameFile (or username) and passwordFile",
        ),
        ("    tls: {certFile: /tls.crt}\n", "clusters[0].tls: certFile and keyFile go together"),
        ("    tls: {keyFile: /tls.key}\n", "clusters[0].tls: certFile and keyFile go together"),
        ("    tls: {verifyHostname: 'no'}\n", "clusters[0].tls.verifyHostname must be true or false"),
        (
            "    tls: {caFile: /ca.crt, keyPasswordFile: /etc/passwd}\n",
            "clusters[0].tls: keyPasswordFile decrypts keyFile; give keyFile too",
        ),
    ],
)
def test_an_unusable_sasl_or_tls_section(tmp_path: Path, snippet: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, CLUSTER + snippet)


def test_an_encrypted_key_s_passphrase_is_read_from_key_password_file(tmp_path: Path) -> None:
    secret = _file(tmp_path, "key-pass\n", "key-password")
    content = CLUSTER + f"    tls: {{certFile: /tls.crt, keyFile: /tls.key, keyPasswordFile: {secret}}}\n"
    tls = load({"KZO_CLUSTERS_FILE": _file(tmp_path, content)}).clusters[0].zk.tls
    assert tls is not None and tls.key_password == "key-pass"


def test_an_empty_sasl_password_file_is_refused(tmp_path: Path) -> None:
    empty = _file(tmp_path, "\n", "password")
    message = _file_error(tmp_path, CLUSTER + f"    sasl: {{username: kafka, passwordFile: {empty}}}\n")
    assert "DIGEST-MD5 needs usernameFile (or username) and passwordFile, non-empty" in message


def test_gssapi_needs_no_password_and_mechanisms_are_case_insensitive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zk_settings, "kerberos_binding_installed", lambda: True)  # not this test's concern
    content = CLUSTER + "    sasl: {mechanism: gssapi, principal: kafka/operator@EXAMPLE.COM}\n"
    sasl = load({"KZO_CLUSTERS_FILE": _file(tmp_path, content)}).clusters[0].zk.sasl
    assert sasl is not None and (sasl.mechanism, sasl.principal) == ("GSSAPI", "kafka/operator@EXAMPLE.COM")


def test_hostname_verification_is_on_unless_turned_off(tmp_path: Path) -> None:
    on = load({"KZO_CLUSTERS_FILE": _file(tmp_path, CLUSTER + "    tls: {caFile: /ca.crt}\n", "on.yaml")})
    off = load(
        {"KZO_CLUSTERS_FILE": _file(tmp_path, CLUSTER + "    tls: {verifyHostname: false}\n", "off.yaml")}
    )
    assert on.clusters[0].zk.tls is not None and on.clusters[0].zk.tls.verify_hostname is True
    assert off.clusters[0].zk.tls is not None and off.clusters[0].zk.tls.verify_hostname is False


# --- kafkaVersion ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "line"),
    [
        ('    kafkaVersion: "2.8"\n', (2, 8, 0)),
        ("    kafkaVersion: 2.8\n", (2, 8, 0)),  # YAML reads it as a number
        ("    kafkaVersion: 2.8.2\n", (2, 8, 0)),
        ("    kafkaVersion: 0.10.0.1\n", (0, 10, 0)),
        ('    kafkaVersion: ""\n', None),
        ("", None),
    ],
)
def test_kafka_version_names_the_clusters_line(
    tmp_path: Path, snippet: str, line: tuple[int, int, int] | None
) -> None:
    (cluster,) = load({"KZO_CLUSTERS_FILE": _file(tmp_path, CLUSTER + snippet)}).clusters
    assert cluster.kafka_version == line


def test_kafka_version_from_the_environment() -> None:
    (cluster,) = load(_zk(KZO_KAFKA_VERSION="1.1.1")).clusters
    assert cluster.kafka_version == (1, 1, 0)
    assert load(_zk()).clusters[0].kafka_version is None


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (
            '    kafkaVersion: "4.2"\n',
            "clusters[0].kafkaVersion: Kafka 4.2 is not supported: the operator manages",
        ),
        ("    kafkaVersion: 0.10\n", "clusters[0].kafkaVersion: '0.1' is not a Kafka version"),
        (
            "    kafkaVersion: [2, 8]\n",
            'clusters[0].kafkaVersion must be a Kafka version such as "2.8", got a list',
        ),
        ("    kafkaVersion: latest\n", "clusters[0].kafkaVersion: 'latest' is not a Kafka version"),
    ],
)
def test_a_bad_kafka_version_is_one_line(tmp_path: Path, snippet: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, CLUSTER + snippet)


@pytest.mark.parametrize("version", ["4.0", "4.1", "4.1.2"])
def test_a_zookeeper_mode_cluster_refuses_kafka_4_in_one_line(tmp_path: Path, version: str) -> None:
    message = _file_error(tmp_path, CLUSTER + f'    kafkaVersion: "{version}"\n')
    line = ".".join(version.split(".")[:2])
    assert message.endswith(
        f"clusters[0].kafkaVersion: Kafka {line} has no ZooKeeper mode (Kafka 4.0 removed it), and this "
        "cluster has zookeeper: a ZooKeeper-mode cluster runs Kafka 3.9 or older; for a KRaft cluster "
        "give bootstrapServers and no zookeeper"
    )
    assert "\n" not in message
    # a migration's cluster (zookeeper and bootstrapServers) runs ZooKeeper-mode brokers too
    both = CLUSTER + "    bootstrapServers: kafka-0:9092\n" + f'    kafkaVersion: "{version}"\n'
    assert "has no ZooKeeper mode (Kafka 4.0 removed it)" in _file_error(tmp_path, both)


def test_kzo_kafka_version_4_is_refused_with_kzo_zookeeper() -> None:
    message = _error(_zk(KZO_KAFKA_VERSION="4.0"))
    assert message.startswith("KZO_KAFKA_VERSION: Kafka 4.0 has no ZooKeeper mode (Kafka 4.0 removed it)")
    assert load(_zk(KZO_KAFKA_VERSION="3.9")).clusters[0].kafka_version == (3, 9, 0)


@pytest.mark.parametrize(("version", "line"), [("4.0", (4, 0, 0)), ("4.1", (4, 1, 0)), ("4.1.2", (4, 1, 0))])
def test_a_kraft_cluster_accepts_kafka_4(tmp_path: Path, version: str, line: tuple[int, int, int]) -> None:
    path = tmp_path / "clusters.yaml"
    path.write_text(
        f'clusters:\n  - name: k\n    bootstrapServers: kafka-0:9092\n    kafkaVersion: "{version}"\n'
    )
    (cluster,) = load({"KZO_CLUSTERS_FILE": str(path)}).clusters
    assert cluster.zookeeper is None and cluster.kafka_version == line


# --- 8. API connections -----------------------------------------------------------------------------


def test_api_connections_default_and_override() -> None:
    assert load(_zk()).api_connections == 32
    assert load(_zk(KZO_API_CONNECTIONS=" 8 ")).api_connections == 8


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "abc", "inf", "nan", "10001"])
def test_api_connections_must_be_a_whole_number_from_1(value: str) -> None:
    message = _error(_zk(KZO_API_CONNECTIONS=value))
    assert message.startswith(f"KZO_API_CONNECTIONS={value!r} is not valid: use a whole number from 1")


@pytest.mark.parametrize("value", ["0", "-1", "2.5", "many", "1025"])
def test_worker_threads_must_be_a_whole_number_from_1_to_1024(value: str) -> None:
    assert load(_zk()).worker_threads == 16
    message = _error(_zk(KZO_WORKER_THREADS=value))
    assert message.startswith(f"KZO_WORKER_THREADS={value!r} is not valid: use a whole number from 1 to 1024")


def test_worker_limit_default_unbounded_and_override() -> None:
    assert load(_zk()).worker_limit == 1000
    assert load(_zk(KZO_WORKER_LIMIT="0")).worker_limit == 0
    assert load(_zk(KZO_WORKER_LIMIT=" 250 ")).worker_limit == 250


@pytest.mark.parametrize("value", ["-1", "1.5", "abc", "inf", "100001"])
def test_worker_limit_must_be_a_whole_number_from_0(value: str) -> None:
    message = _error(_zk(KZO_WORKER_LIMIT=value))
    assert message.startswith(
        f"KZO_WORKER_LIMIT={value!r} is not valid: use a whole number from 0 (unbounded)"
    )


# --- bootstrapServers (partition sizes for byte-balanced reassignments) ----------------------------


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("    bootstrapServers: kafka-0:9092\n", "kafka-0:9092"),
        ("    bootstrapServers: 'kafka-0:9092, kafka-1:9092'\n", "kafka-0:9092,kafka-1:9092"),
        ("", None),
    ],
)
def test_bootstrap_servers_are_read(tmp_path: Path, snippet: str, expected: str | None) -> None:
    (cluster,) = load({"KZO_CLUSTERS_FILE": _file(tmp_path, CLUSTER + snippet)}).clusters
    assert cluster.bootstrap_servers == expected


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("    bootstrapServers: 9092\n", "must be a string HOST:PORT"),
        ("    bootstrapServers: kafka-0\n", "'kafka-0' is not HOST:PORT"),
        ("    bootstrapServers: 'kafka-0:9092,kafka-1:99999'\n", "'kafka-1:99999' is not HOST:PORT"),
    ],
)
def test_bad_bootstrap_servers_are_one_line(tmp_path: Path, snippet: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, CLUSTER + snippet)


# --- KRaft clusters: bootstrapServers and no zookeeper --------------------------------------------

KRAFT = "clusters:\n  - name: kraft\n    bootstrapServers: kafka-0:9092,kafka-1:9092\n"


def test_a_cluster_with_bootstrap_servers_and_no_zookeeper_is_a_kraft_cluster(tmp_path: Path) -> None:
    (cluster,) = load({"KZO_CLUSTERS_FILE": _file(tmp_path, KRAFT + '    kafkaVersion: "3.9"\n')}).clusters
    assert cluster.zookeeper is None
    assert cluster.bootstrap_servers == "kafka-0:9092,kafka-1:9092"
    assert cluster.kafka_version == (3, 9, 0)
    with pytest.raises(SettingsError, match="has no zookeeper"):
        cluster.zk  # noqa: B018 - the property raises


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("    secureAcls: true\n", "clusters[0].secureAcls configures the ZooKeeper connection"),
        ("    sessionTimeoutSeconds: 18\n", "clusters[0].sessionTimeoutSeconds configures the ZooKeeper"),
        ("    sasl: {mechanism: DIGEST-MD5}\n", "clusters[0].sasl configures the ZooKeeper connection"),
        ('    kafkaVersion: "2.8"\n', "kafkaVersion 2.8 has no KRaft mode, so this cluster needs zookeeper"),
    ],
)
def test_a_kraft_cluster_refuses_zookeeper_settings(tmp_path: Path, snippet: str, expected: str) -> None:
    assert expected in _file_error(tmp_path, KRAFT + snippet)


def test_a_cluster_with_neither_zookeeper_nor_bootstrap_servers_says_what_it_needs(tmp_path: Path) -> None:
    message = _file_error(tmp_path, "clusters:\n  - name: main\n")
    assert "or, for a KRaft cluster, bootstrapServers" in message
