"""Spark-on-Kubernetes offload, pure parts: chunked ConfigMaps, the built objects, the image entrypoint,
the offload decision and settings. The API server's verdict on the objects is in
``tests/e2e/test_spark_offload.py``."""

from __future__ import annotations

import json
import os
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from kafka_zk_operator.adapters.k8s import spark_submit
from kafka_zk_operator.adapters.k8s.spark_submit import SparkSettings, build_spark_job
from kafka_zk_operator.domain import errors
from kafka_zk_operator.service import plan_offload
from kafka_zk_operator.spark import entrypoint

SETTINGS = SparkSettings(image="reg.example/kzo-spark:1", service_account="kzo-spark", namespace="kzo")
SNAPSHOT = json.dumps({"brokers": {str(i): {"rack": "r"} for i in range(50)}, "topics": {}}).encode() * 40


def _job(**kw: Any) -> spark_submit.SparkJobObjects:
    return build_spark_job(
        "kzo-plan-abc", SETTINGS, snapshot=SNAPSHOT, request={"mode": "rebalance", "seed": 1}, **kw
    )


# -- chunks ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 5_000, 200_000])
def test_chunks_round_trip_and_are_deterministic(size: int) -> None:
    payload = os.urandom(size // 2) + b"x" * (size - size // 2)
    cms = spark_submit.chunk_configmaps("j", "ns", "result", payload, chunk_bytes=10_000)
    assert spark_submit.unpack(cms) == payload
    assert spark_submit.unpack(list(reversed(cms))) == payload
    assert cms == spark_submit.chunk_configmaps("j", "ns", "result", payload, chunk_bytes=10_000)
    assert [c["metadata"]["name"] for c in cms] == [f"j-result-{i}" for i in range(len(cms))]
    if size == 200_000:
        assert len(cms) > 5  # random half does not compress


def test_missing_chunks_mean_not_ready() -> None:
    cms = spark_submit.chunk_configmaps("j", "ns", "result", os.urandom(30_000), chunk_bytes=10_000)
    assert len(cms) == 4
    assert spark_submit.unpack(cms[:3]) is None
    assert spark_submit.unpack([]) is None


def test_chunks_of_different_payloads_or_a_bad_digest_are_refused() -> None:
    a = spark_submit.chunk_configmaps("j", "ns", "result", b"a" * 100, chunk_bytes=10)
    b = spark_submit.chunk_configmaps("j", "ns", "result", b"b" * 100, chunk_bytes=10)
    with pytest.raises(errors.InvalidSpec, match="different payloads"):
        spark_submit.unpack([a[0], *b[1:]])
    forged = json.loads(json.dumps(a))
    forged[0]["metadata"]["annotations"][spark_submit.SHA_ANNOTATION] = "0" * 64
    for cm in forged[1:]:
        cm["metadata"]["annotations"][spark_submit.SHA_ANNOTATION] = "0" * 64
    with pytest.raises(errors.InvalidSpec, match="SHA-256"):
        spark_submit.unpack(forged)


def test_every_chunk_stays_under_the_configmap_limit() -> None:
    payload = os.urandom(3 * spark_submit.CHUNK_BYTES)
    for cm in spark_submit.chunk_configmaps("j", "ns", "input", payload):
        assert len(json.dumps(cm)) < 1_048_576 * 4 // 3 + 2_000  # base64 in JSON; 1 MiB of raw data
        assert len(cm["binaryData"][spark_submit.PAYLOAD_KEY]) * 3 // 4 <= spark_submit.CHUNK_BYTES


# -- the job objects -----------------------------------------------------------------------------------


def test_objects_are_valid_kubernetes_objects() -> None:
    job = _job(chunk_bytes=2_000)
    for version in ("1.27", "1.33"):
        for body in job.objects():
            assert kubernetes_validate.validate(body, version, strict=True) == version
        template = yaml.safe_load(job.pod_template["data"][spark_submit.TEMPLATE_FILE])
        kubernetes_validate.validate({**template, "metadata": {"name": "x"}}, version, strict=True)


def test_inputs_come_first_hold_the_snapshot_and_the_request() -> None:
    job = _job(chunk_bytes=200)
    kinds = [o["kind"] for o in job.objects()]
    assert kinds[-1] == "Job" and set(kinds[:-1]) == {"ConfigMap"}
    assert len(job.input_configmaps) > 1
    assert spark_submit.unpack(job.input_configmaps) == SNAPSHOT
    data = spark_submit.first_chunk_data(job.input_configmaps)
    assert json.loads(data[spark_submit.REQUEST_KEY]) == {"mode": "rebalance", "seed": 1}
    assert all(cm["metadata"]["labels"][spark_submit.JOB_LABEL] == "kzo-plan-abc" for cm in job.objects())


def test_the_job_runs_spark_submit_in_cluster_mode_with_the_driver_program() -> None:
    job = _job().job
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["activeDeadlineSeconds"] == SETTINGS.timeout_seconds
    pod = job["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "kzo-spark" and pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["command"][:2] == ["/bin/sh", "-c"] and "spark-submit" in container["command"][2]
    args = container["args"]
    assert args[:6] == [
        "--master",
        "k8s://https://kubernetes.default.svc:443",
        "--deploy-mode",
        "cluster",
        "--name",
        "kzo-plan-abc",
    ]
    confs = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--conf")
    assert confs["spark.kubernetes.container.image"] == "reg.example/kzo-spark:1"
    assert confs["spark.kubernetes.authenticate.driver.serviceAccountName"] == "kzo-spark"
    assert confs["spark.kubernetes.namespace"] == "kzo"
    assert confs["spark.kubernetes.driver.pod.name"] == "kzo-plan-abc-driver"
    assert confs["spark.kubernetes.submission.waitAppCompletion"] == "true"
    assert confs["spark.kubernetes.driver.podTemplateFile"].startswith(spark_submit.TEMPLATE_DIR)
    assert spark_submit.app_arguments(job) == ["--namespace", "kzo", "--job", "kzo-plan-abc"]
    assert spark_submit.app_arguments(_job(chunk_bytes=5).job)[-2:] == ["--chunk-bytes", "5"]


def test_pod_cpu_requests_are_spark_defaults_unless_set() -> None:
    default = spark_submit.spark_conf("kzo-plan-abc", SETTINGS)
    assert not any(key.endswith(".request.cores") for key in default)
    small = SparkSettings(
        image="i",
        service_account="s",
        namespace="n",
        driver_request_cores="250m",
        executor_request_cores="0.5",
    )
    conf = spark_submit.spark_conf("kzo-plan-abc", small)
    assert conf["spark.kubernetes.driver.request.cores"] == "250m"
    assert conf["spark.kubernetes.executor.request.cores"] == "0.5"


def test_every_pod_is_restricted() -> None:
    job = _job()
    template = yaml.safe_load(job.pod_template["data"][spark_submit.TEMPLATE_FILE])
    pod = job.job["spec"]["template"]["spec"]
    for spec in (pod, template["spec"]):
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in spec["containers"]:
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
            assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert template["spec"]["containers"][0]["name"] == spark_submit.CONTAINER


@pytest.mark.parametrize("name", ["Upper", "a_b", "-a", "a" * 41, ""])
def test_bad_job_names_are_refused(name: str) -> None:
    with pytest.raises(errors.InvalidSpec, match="Spark job name"):
        build_spark_job(name, SETTINGS, snapshot=b"{}", request={"mode": "rebalance"})


# -- image entrypoint ----------------------------------------------------------------------------------


def test_entrypoint_turns_driver_into_client_mode_spark_submit() -> None:
    env = {"SPARK_HOME": "/sh", "SPARK_DRIVER_BIND_ADDRESS": "10.0.0.5"}
    cmd = entrypoint.command(
        ["driver", "--properties-file", "/opt/spark/conf/spark.properties", "local:///a.py"], env
    )
    assert cmd[0] == "/sh/bin/spark-submit"
    assert cmd[1:7] == [
        "--conf", "spark.driver.bindAddress=10.0.0.5",
        "--conf", "spark.executorEnv.SPARK_DRIVER_POD_IP=10.0.0.5",
        "--deploy-mode", "client",
    ]  # fmt: skip
    assert cmd[-1] == "local:///a.py"


def test_entrypoint_starts_the_kubernetes_executor_backend() -> None:
    env = {
        "SPARK_HOME": "/sh",
        "JAVA_HOME": "/jvm",
        "SPARK_EXECUTOR_MEMORY": "2g",
        "SPARK_JAVA_OPT_10": "-Dten",
        "SPARK_JAVA_OPT_2": "-Dtwo",
        "SPARK_DRIVER_URL": "spark://CoarseGrainedScheduler@d:7078",
        "SPARK_EXECUTOR_ID": "3",
        "SPARK_EXECUTOR_POD_NAME": "p-exec-3",
    }
    cmd = entrypoint.command(["executor"], env, cwd="/work")
    assert cmd[:5] == ["/jvm/bin/java", "-Dtwo", "-Dten", "-Xms2g", "-Xmx2g"]
    assert cmd[5:7] == ["-cp", "/sh/conf:/sh/jars/*:/work"]
    assert cmd[7] == "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend"
    flags = dict(zip(cmd[8::2], cmd[9::2], strict=True))
    assert flags["--executor-id"] == "3" and flags["--podName"] == "p-exec-3"
    assert flags["--driver-url"] == "spark://CoarseGrainedScheduler@d:7078"


def test_entrypoint_passes_anything_else_to_kzo() -> None:
    assert entrypoint.command(["plan", "--help"], {}) == ["kzo", "plan", "--help"]
    assert entrypoint.command([], {}) == ["kzo"]


def test_spark_home_defaults_to_the_pyspark_package() -> None:
    assert os.path.isfile(os.path.join(entrypoint.spark_home({}), "bin", "spark-submit"))


# -- offload decision and settings ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "threshold", "expected"),
    [(1_000_001, 1_000_000, True), (1_000_000, 1_000_000, False), (10**7, 0, False), (10**7, None, False)],
)
def test_should_offload(size: int, threshold: int | None, expected: bool) -> None:
    assert plan_offload.should_offload(size, threshold) is expected


def test_job_names_are_stable_valid_and_distinct() -> None:
    a, b = plan_offload.job_name("uid-1", "p1"), plan_offload.job_name("uid-1", "p2")
    assert a == plan_offload.job_name("uid-1", "p1") != b
    spark_submit.check_name(a)


def test_settings_documents() -> None:
    good = {
        "offloadAbovePartitions": 5,
        "spark": {"image": "i", "service_account": "s", "namespace": "n", "executors": 4},
    }
    settings = plan_offload.settings_from_json(json.dumps(good))
    assert settings.offload_above_partitions == 5 and settings.spark.executors == 4
    for bad in ("{}", "nope", json.dumps({"offloadAbovePartitions": 1, "spark": {"image": "i"}})):
        with pytest.raises(errors.InvalidSpec, match="Spark offload settings"):
            plan_offload.settings_from_json(bad)
