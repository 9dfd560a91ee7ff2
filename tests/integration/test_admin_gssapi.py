"""The operator's Kafka connections over SASL GSSAPI (Kerberos, ``kafkaSecurity.sasl.mechanism:
GSSAPI``), against a real MIT KDC (``devstack.kerberos.KerberosRealm``) and one real ZooKeeper-mode
Kafka 3.9.2 broker of its own with two listeners:

=================  =========================================================================
PLAINTEXT          inter-broker (127.0.0.1)
SASL_PLAINTEXT     GSSAPI only, on ``localhost``: the broker logs in as ``kafka/localhost`` from
                   its keytab (``listener.name.sasl_plaintext.gssapi.sasl.jaas.config``,
                   Krb5LoginModule), the JVM pointed at the realm's krb5.conf
=================  =========================================================================

The operator's keytab holds two principals, ``kzo-zk`` first (what MIT would pick by default)
and ``kzo``, the one the clusters file names: a clusters file read by ``config.load`` configures
the cluster; the ``AdminBackend`` the runtime builds from it creates a topic and changes its
config over GSSAPI. Kafka's own ``TopicCommand`` and ``ConfigCommand``, logged in over GSSAPI as
a principal of their own (``kzo-check``, a client JAAS from its keytab), see both; the KDC's log
shows that ``kzo`` asked for the broker's ticket; ``kzo check``, in a process of its own with only
``KRB5_CONFIG`` set (as in the chart's pod), logs in too. A principal the keytab does not hold and a stale
keytab are each one ``ClusterUnavailable`` line with MIT's reason, never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kafka_zk_operator import config
from kafka_zk_operator.adapters.kafka.admin_backend import AdminBackend
from kafka_zk_operator.devstack import java, ports
from kafka_zk_operator.devstack.kafka import KafkaBroker
from kafka_zk_operator.devstack.kerberos import KerberosRealm
from kafka_zk_operator.devstack.stack import LocalStack, StackSpec
from kafka_zk_operator.domain import errors
from kafka_zk_operator.runtime.clusters import ClusterRuntime
from tests.integration.helpers import wait_for
from tests.integration.kerberos_stack import environment

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the MIT KDC of these tests runs on Linux")

REPO = Path(__file__).resolve().parents[2]
BROKER_PRINCIPAL = "kafka/localhost"


@dataclass
class GssapiBroker:
    realm: KerberosRealm
    libs: Path
    zk_connect: str
    sasl: str  # localhost:port of the GSSAPI listener
    keytabs: Path
    principals: dict[str, str]  # short name → principal@REALM
    workdir: Path


def _jaas(keytab: Path, principal: str) -> str:
    """A Krb5LoginModule login from ``keytab`` (a listener's or a client's ``sasl.jaas.config``)."""
    return (
        "com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true "
        f'useTicketCache=false keyTab="{keytab}" principal="{principal}";'
    )


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GssapiBroker]:
    started = time.monotonic()
    workdir = tmp_path_factory.mktemp("admin-gssapi")
    keytabs = workdir / "keytabs"
    realm = KerberosRealm(workdir / "kdc")
    stack = LocalStack(
        StackSpec(brokers=0, with_kubernetes=False, racks=()),
        workdir / "stack",
        progress=lambda m: print(f"[stack] {m}"),
    )
    kafka: KafkaBroker | None = None
    # The operator's Kerberos settings are process-wide (adapters.zk.kerberos.use_keytab): a cache
    # collection of this module's own, and every variable put back afterwards.
    ccache = tempfile.mkdtemp(prefix="kzo-gssapi-ccache-", dir=workdir)
    try:
        realm.start()
        principals = {
            "broker": realm.add_principal(BROKER_PRINCIPAL, keytabs / "kafka.keytab"),
            # Both in the operator's keytab, kzo-zk first: MIT's default client principal.
            "kzo-zk": realm.add_principal("kzo-zk", keytabs / "operator.keytab"),
            "kzo": realm.add_principal("kzo", keytabs / "operator.keytab"),
            "kzo-check": realm.add_principal("kzo-check", keytabs / "check.keytab"),
            "stale": realm.add_principal("kzo-stale", keytabs / "stale.keytab"),
        }
        realm.export(principals["stale"], keytabs / "stale-new.keytab")  # stale.keytab's key is old now
        stack.up()  # ZooKeeper only: the broker below has listeners of its own
        assert stack.kafka_libs is not None
        plaintext, sasl = ports.free_port(), ports.free_port()
        urls = f"PLAINTEXT://{ports.LOOPBACK}:{plaintext},SASL_PLAINTEXT://localhost:{sasl}"
        zk_connect = f"{stack.zk_hosts}{stack.spec.chroot}"
        kafka = KafkaBroker(
            broker_id=1,
            rack=None,
            port=plaintext,
            workdir=workdir / "kafka-1",
            libs=stack.kafka_libs,
            zk_connect=zk_connect,
            cluster_size=1,
            extra_properties={
                "listeners": urls,
                "advertised.listeners": urls,
                "inter.broker.listener.name": "PLAINTEXT",
                "sasl.enabled.mechanisms": "GSSAPI",
                "sasl.kerberos.service.name": "kafka",
                "listener.name.sasl_plaintext.gssapi.sasl.jaas.config": _jaas(
                    keytabs / "kafka.keytab", principals["broker"]
                ),
            },
            jvm_options=realm.java_options,
        )
        with environment(
            {"KRB5_CONFIG": str(realm.krb5_conf), "KRB5CCNAME": f"DIR:{ccache}", "KRB5_CLIENT_KTNAME": ""}
        ):
            kafka.start()
            kafka.wait_listening()
            stack.wait_brokers_registered({1})
            print(
                f"[figures] KDC and broker with a GSSAPI listener ready in {time.monotonic() - started:.1f} s"
            )
            yield GssapiBroker(
                realm, stack.kafka_libs, zk_connect, f"localhost:{sasl}", keytabs, principals, workdir
            )
    finally:
        if kafka is not None:
            kafka.stop()
        stack.down()
        realm.stop()


def _kafka_tool(broker: GssapiBroker, main_class: str, *args: str) -> str:
    """One of Kafka's own tools on the GSSAPI listener, logged in as ``kzo-check`` from its keytab."""
    properties = broker.workdir / "check-client.properties"
    jaas = _jaas(broker.keytabs / "check.keytab", broker.principals["kzo-check"])
    properties.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        f"sasl.jaas.config={jaas}\n"
    )
    argv = java.java_argv(
        broker.libs,
        main_class,
        ["--bootstrap-server", broker.sasl, "--command-config", str(properties), *args],
        heap="256m",
        log4j=java.write_log4j(broker.workdir / "tools-log4j.properties"),
    )
    argv[1:1] = broker.realm.java_options
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (done.stdout, done.stderr[-2000:])
    return done.stdout


def _led(broker: GssapiBroker, topic: str) -> str | None:
    """``TopicCommand --describe`` of ``topic`` once it lists a leader."""
    out = _kafka_tool(broker, "org.apache.kafka.tools.TopicCommand", "--describe", "--topic", topic)
    return out if "Leader: 1" in out else None


def _clusters_file(broker: GssapiBroker, tmp_path: Path, sasl: dict[str, Any]) -> Path:
    """A clusters file for the GSSAPI listener with this ``kafkaSecurity.sasl``."""
    cluster = {
        "name": "main",
        "zookeeper": broker.zk_connect,
        "bootstrapServers": broker.sasl,
        "kafkaSecurity": {"protocol": "SASL_PLAINTEXT", "sasl": {"mechanism": "GSSAPI", **sasl}},
    }
    path = tmp_path / "clusters.yaml"
    path.write_text(yaml.safe_dump({"clusters": [cluster]}))
    return path


def _backend(
    broker: GssapiBroker, tmp_path: Path, sasl: dict[str, Any]
) -> tuple[ClusterRuntime, AdminBackend]:
    """The runtime of a clusters file with this ``kafkaSecurity.sasl``, and its Admin backend."""
    path = _clusters_file(broker, tmp_path, sasl)
    (settings,) = config.load({"KZO_CLUSTERS_FILE": str(path)}).clusters
    assert settings.kafka_security.sasl_mechanism == "GSSAPI"
    runtime = ClusterRuntime(settings, None)
    return runtime, runtime.admin()


def test_the_admin_backend_creates_a_topic_and_changes_its_config_over_gssapi(
    broker: GssapiBroker, tmp_path: Path
) -> None:
    keytab = str(broker.keytabs / "operator.keytab")
    runtime, backend = _backend(broker, tmp_path, {"principal": "kzo", "keytab": keytab, "service": "kafka"})
    topic = f"gssapi-{uuid.uuid4().hex[:6]}"
    try:
        started = time.monotonic()
        backend.create_topic(topic, {0: (1,), 1: (1,)}, {"retention.ms": "3600000"})
        took = time.monotonic() - started
        backend.write_topic_config(
            topic, {"retention.ms": "7200000", "cleanup.policy": "compact"}, expected_version=None
        )
        print(f"[figures] gssapi: first create (Kerberos login and bootstrap included) {took:.2f} s")
    finally:
        runtime.close()

    described = wait_for(lambda: _led(broker, topic), what="Kafka's TopicCommand to show the topic led")
    assert f"Topic: {topic}" in described and "PartitionCount: 2" in described, described
    configs = _kafka_tool(
        broker, "kafka.admin.ConfigCommand", "--describe", "--entity-type", "topics", "--entity-name", topic
    )
    assert "retention.ms=7200000" in configs and "cleanup.policy=compact" in configs, configs
    # The KDC issued the broker's ticket to kzo, the principal the clusters file names, though
    # kzo-zk comes first in the keytab (the default MIT would otherwise take).
    assert broker.realm.process is not None
    kdc_log = broker.realm.process.log_path.read_text().splitlines()
    issued = [
        line for line in kdc_log if "TGS_REQ" in line and "ISSUE" in line and "kafka/localhost@" in line
    ]
    assert any(f"{broker.principals['kzo']} for kafka/localhost@" in line for line in issued), issued[-5:]
    assert not any(f"{broker.principals['kzo-zk']} for kafka/localhost@" in line for line in issued), issued


@pytest.mark.parametrize(
    ("principal", "keytab", "reason"),
    [
        ("nobody", "operator.keytab", "Can't find client principal nobody@KZO.TEST"),
        ("kzo-stale", "stale.keytab", ""),  # MIT: preauthentication failed, or an integrity check
    ],
)
def test_a_wrong_principal_or_keytab_is_one_line_with_mits_reason(
    broker: GssapiBroker,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    principal: str,
    keytab: str,
    reason: str,
) -> None:
    path = str(broker.keytabs / keytab)
    runtime, backend = _backend(broker, tmp_path, {"principal": principal, "keytab": path})
    topic = f"refused-gssapi-{uuid.uuid4().hex[:6]}"
    started = time.monotonic()
    try:
        with pytest.raises(errors.ClusterUnavailable) as raised:
            backend.create_topic(topic, {0: (1,)}, {})
    finally:
        runtime.close()
    elapsed, message = time.monotonic() - started, str(raised.value)
    print(f"[gssapi] {principal} from {keytab}, after {elapsed:.2f} s: {message}")
    assert message.startswith(
        f"Kerberos login of {principal!r} from keytab {path} for Kafka at {broker.sasl} failed: "
    ), message
    assert reason in message and "\n" not in message and "Traceback" not in message, message
    assert "the keytab must hold the principal's current key" in message, message
    assert f"(krb5.conf: {broker.realm.krb5_conf})" in message, message
    assert elapsed < 10, f"took {elapsed:.1f} s: the login is checked before kafka-python's bootstrap"
    assert not [r.getMessage() for r in caplog.records if r.exc_info], "logged with a traceback"
    listed = _kafka_tool(broker, "org.apache.kafka.tools.TopicCommand", "--list")
    assert topic not in listed.split(), listed


def test_kzo_check_logs_in_from_the_keytab_in_a_process_of_its_own(
    broker: GssapiBroker, tmp_path: Path
) -> None:
    """As in the chart's pod: only KRB5_CONFIG set, no credentials cache named (the operator's own)."""
    sasl = {"principal": "kzo", "keytab": str(broker.keytabs / "operator.keytab")}
    path = _clusters_file(broker, tmp_path, sasl)
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("KZO_", "KRB5")) and k != "KUBECONFIG"
    }
    environment.update(
        PYTHONPATH=str(REPO / "operator"),
        KZO_CLUSTERS_FILE=str(path),
        KRB5_CONFIG=str(broker.realm.krb5_conf),
    )
    done = subprocess.run(
        [sys.executable, "-m", "kafka_zk_operator", "check", "--timeout", "10", "--no-api"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    expected = f"ok    kafka main: {broker.sasl} (SASL_PLAINTEXT GSSAPI as 'kzo'): brokers 1 answer"
    assert expected in done.stdout, done.stdout
