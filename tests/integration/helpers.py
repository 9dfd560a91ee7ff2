"""Small polling helpers for tests against the real stack (never fixed sleeps)."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from kazoo.client import KazooClient

from kafka_zk_operator.devstack import artifacts, java, tools

T = TypeVar("T")


def wait_for(
    probe: Callable[[], T | None], *, timeout: float = 60.0, interval: float = 0.25, what: str = "condition"
) -> T:
    """Call ``probe`` until it returns a truthy value and return that value."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last value: {last!r})")


def send_outcome(producer: Any, topic: str, size: int) -> str | None:
    """Send one record of ``size`` bytes to partition 0 and say what the broker answered.

    ``"refused"`` (``MessageSizeTooLargeError``), ``"accepted"``, or None for a retriable error
    (no leader yet, a client's metadata naming a broker that does not lead any more): that is no
    answer about the record, so callers ask again with :func:`wait_for`.
    """
    from kafka import errors as kafka_errors

    try:
        producer.send(topic, value=b"x" * size, partition=0).get(timeout=30)
    except kafka_errors.MessageSizeTooLargeError:
        return "refused"
    except kafka_errors.KafkaError as error:
        if getattr(error, "retriable", False):
            return None
        raise
    return "accepted"


def alter_topic_config(admin: Any, topic: str, configs: dict[str, Any], *, timeout: float = 30.0) -> None:
    """Alter a topic's config through Kafka's Admin API, retrying until the broker answers OK.

    kafka-python 3 validates keys against a DescribeConfigs answer from a random broker first, which
    is empty on a broker that has not learned of a just-created topic ("Unrecognized configs"); the
    broker's own validation is what counts, so that pre-check is off and the answer is checked here.
    """
    from kafka.admin import ConfigResource, ConfigResourceType

    def attempt() -> str | None:
        try:
            answer = admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict(configs))],
                raise_on_unknown=False,
            )
        except Exception as exc:  # e.g. no broker knows the topic yet: retried until the timeout
            errors.append(repr(exc))
            return None
        result: str | None = answer.get("topic", {}).get(topic)  # kafka-python is untyped
        if result != "OK":
            errors.append(str(result))
            return None
        return result

    errors: list[str] = []
    try:
        wait_for(attempt, timeout=timeout, interval=0.5, what=f"Kafka to accept the config change of {topic}")
    except AssertionError as exc:
        raise AssertionError(f"{exc}; last answer: {errors[-1] if errors else None}") from None


def sent_exists(zk: KazooClient, monkeypatch: Any) -> list[str]:
    """The paths whose stamps ``zk`` is asked from now on (its ``exists_async``), in order
    (``monkeypatch``: pytest's, which undoes the wrapping after the test)."""
    sent: list[str] = []
    exists_async = zk.exists_async

    def counting_exists_async(path: str, watch: Any = None) -> Any:
        sent.append(path)
        return exists_async(path, watch)

    monkeypatch.setattr(zk, "exists_async", counting_exists_async)
    return sent


def kafka_tool(version: str, main_class: str, zk_connect: str, workdir: Path, *args: str) -> str:
    """Run one of Kafka ``version``'s own ``--zookeeper`` tools (e.g. ``kafka.admin.ConfigCommand``);
    its standard output."""
    log4j = java.write_log4j(workdir / "log4j.properties")
    argv = java.java_argv(
        artifacts.kafka_libs(version),
        main_class,
        ["--zookeeper", zk_connect, *args],
        heap="256m",
        log4j=log4j,
    )
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def empty_chroot(zk_hosts: str, prefix: str) -> KazooClient:
    """A started client on a new, empty chroot of the test ZooKeeper that no broker watches."""
    chroot = f"/{prefix}-{uuid.uuid4().hex[:8]}"
    root = KazooClient(hosts=zk_hosts)
    root.start()
    try:
        root.ensure_path(chroot)
    finally:
        root.stop()
        root.close()
    client = KazooClient(hosts=f"{zk_hosts}{chroot}")
    client.start()
    return client


CHART = Path(__file__).resolve().parents[2] / "charts" / "kafka-zk-operator"


def apply_chart_spark_objects(
    kubeconfig: Path, namespace: str, spark_values: dict[str, Any], tmp: Path
) -> None:
    """Render the chart's Spark objects (``spark.enabled`` plus ``spark_values``; release ``kzo``,
    ``fullnameOverride: kzo``) with the real helm and apply them server-side in ``namespace``."""
    values = {"fullnameOverride": "kzo", "spark": {"enabled": True, **spark_values}}
    values_path = tmp / "spark-values.yaml"
    values_path.write_text(yaml.safe_dump(values))
    rendered = subprocess.run(
        [str(tools.helm_binary()), "template", "kzo", str(CHART), "--namespace", namespace, "-f", str(values_path)],
        capture_output=True, text=True, check=True, timeout=120,
    ).stdout  # fmt: skip
    docs = [d for d in yaml.safe_load_all(rendered) if d and "spark" in d["metadata"]["name"]]
    manifest = tmp / "spark.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    subprocess.run(
        [str(tools.kubectl_binary()), "--kubeconfig", str(kubeconfig), "apply", "--server-side", "-f", str(manifest)],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
