"""Kubernetes objects that run the PySpark planning job in a cluster (pure builders, no API call).

Choice (docs/spark.md): ``spark-submit --deploy-mode cluster`` from a Kubernetes ``Job``, not a
kubeflow ``SparkApplication``, so no extra operator or CRD is needed. The Job's pod runs
spark-submit with ``waitAppCompletion=true`` (the Job's outcome is the application's); Spark then
creates the driver pod (``<job>-driver``), which creates the executors. Every pod runs the image's
``spark`` target under the service account ``settings.service_account`` (Role: pods, services,
configmaps, persistentvolumeclaims in its namespace; chart ``templates/spark-rbac.yaml``).

Objects of one job ``<job>`` (all in ``settings.namespace``, labelled ``JOB_LABEL=<job>``):

* ``<job>-input-<i>``: the cluster snapshot (``domain.documents.snapshot`` JSON), gzip-compressed and split
  into ConfigMaps of at most :data:`CHUNK_BYTES` (``binaryData``; the API server limits a
  ConfigMap to 1 MiB); chunk 0 also holds the request (``request.json``);
* ``<job>-pod-template``: the pod template of the driver and the executors (restricted Pod
  Security: non-root 10001, no privilege escalation, no capabilities, RuntimeDefault seccomp),
  mounted into the Job's pod for spark-submit;
* ``<job>``: the ``batch/v1`` Job;
* ``<job>-result-<i>``: written by the driver when it is done (same chunking): the plan result
  document (``domain.documents.plan_result``) or an error document.

A chunk's annotations name its position (``i/n``) and the SHA-256 of the whole payload, so a
reader knows whether it has all of them (:func:`unpack`).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_zk_operator.domain import crd_identity, errors

JOB_LABEL = crd_identity.SPARK_JOB_LABEL
ROLE_LABEL = crd_identity.SPARK_ROLE_LABEL
CHUNK_ANNOTATION = crd_identity.SPARK_CHUNK_ANNOTATION
SHA_ANNOTATION = crd_identity.SPARK_SHA_ANNOTATION
INPUT, RESULT = "input", "result"
#: Role of the pod template ConfigMap, created right before the Job: its presence means "submitted".
POD_TEMPLATE = "template"
PAYLOAD_KEY = "payload.gz"
REQUEST_KEY = "request.json"
#: Compressed bytes per ConfigMap: 3/4 MiB leaves room for metadata under the 1 MiB limit.
CHUNK_BYTES = 786_432
#: Where the image's ``spark`` target keeps the driver program (Dockerfile).
DRIVER_APP = "local:///opt/kzo/spark_driver.py"
MASTER = "k8s://https://kubernetes.default.svc:443"
TEMPLATE_DIR = "/etc/kzo-spark"
TEMPLATE_FILE = "pod-template.yaml"
CONTAINER = "spark"
USER_ID = 10001
_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
#: ``<job>-driver`` and executor pod names must stay valid (spark caps the prefix at 47).
MAX_NAME = 40

# spark-submit waits for the application; whatever its end (success, failure, a driver killed), the
# driver pod is deleted afterwards, and the executors and the driver's own ConfigMap and Service go
# with it (they are owned by the driver pod). When the Job's pod is asked to stop (the Job deleted,
# its deadline passed), the trap does the same before exiting, so no pod of a run outlives its Job.
# spark-submit's own log (in the Job's pod) keeps the driver's final state and exit code.
_SUBMIT_SCRIPT = """kill_driver() {
  spark-submit --master "$KZO_SPARK_MASTER" --kill "$KZO_SPARK_DRIVER" >/dev/null 2>&1 || true
}
trap 'kill "$submit" 2>/dev/null; kill_driver; exit 143' TERM INT
spark-submit "$@" &
submit=$!
wait "$submit"
rc=$?
kill_driver
exit "$rc"
"""
#: Time the Job's pod has to delete the driver when it is stopped (a JVM start, on a busy node).
SUBMIT_GRACE_SECONDS = 90


@dataclass(frozen=True)
class SparkSettings:
    """Where and how jobs run (chart values ``spark.*``; ``service.plan_offload.load_settings``)."""

    image: str
    service_account: str
    namespace: str
    executors: int = 2
    executor_cores: int = 1
    executor_memory: str = "2g"
    driver_memory: str = "2g"
    timeout_seconds: int = 3600
    ttl_seconds: int = 86400
    pull_policy: str = "IfNotPresent"
    #: The CPU the driver's and each executor's pod request ("500m", "0.5"); empty: their cores,
    #: Spark's default. Lower it on small nodes (a 2-core node cannot fit a driver and two executors
    #: of 1 core each next to anything else).
    driver_request_cores: str = ""
    executor_request_cores: str = ""


@dataclass(frozen=True)
class SparkJobObjects:
    """The objects of one job (module docstring) and the digest of its input snapshot."""

    name: str
    namespace: str
    input_configmaps: tuple[dict[str, Any], ...]
    pod_template: dict[str, Any]
    job: dict[str, Any]
    input_sha256: str

    def objects(self) -> list[dict[str, Any]]:
        """In creation order: the inputs first, the Job last (it must find them)."""
        return [*self.input_configmaps, self.pod_template, self.job]


def labels(name: str, role: str | None = None) -> dict[str, str]:
    out = {
        "app.kubernetes.io/name": "kafka-zk-operator",
        "app.kubernetes.io/component": "spark-plan",
        "app.kubernetes.io/managed-by": "kafka-zk-operator",
        JOB_LABEL: name,
    }
    if role is not None:
        out[ROLE_LABEL] = role
    return out


def selector(name: str, role: str | None = None) -> str:
    """Label selector of a job's objects (of one role when given)."""
    return ",".join(f"{k}={v}" for k, v in labels(name, role).items() if k in (JOB_LABEL, ROLE_LABEL))


def check_name(name: str) -> None:
    """:raises InvalidSpec: not a DNS-1123 label of at most :data:`MAX_NAME` characters."""
    if len(name) > MAX_NAME or not _NAME.fullmatch(name):
        raise errors.InvalidSpec(
            f"Spark job name {name!r} must be lower-case letters, digits and '-' (at most {MAX_NAME})"
        )


# -- chunks ----------------------------------------------------------------------------------------
def chunk_configmaps(
    name: str,
    namespace: str,
    role: str,
    payload: bytes,
    *,
    extra_data: Mapping[str, str] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> list[dict[str, Any]]:
    """``payload`` gzip-compressed (deterministic: no timestamp) into ConfigMaps ``<name>-<role>-<i>``."""
    packed = gzip.compress(payload, mtime=0)
    parts = [packed[i : i + chunk_bytes] for i in range(0, len(packed), chunk_bytes)] or [b""]
    sha = hashlib.sha256(payload).hexdigest()
    out = []
    for i, part in enumerate(parts):
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"{name}-{role}-{i}",
                "namespace": namespace,
                "labels": labels(name, role),
                "annotations": {CHUNK_ANNOTATION: f"{i}/{len(parts)}", SHA_ANNOTATION: sha},
            },
            "binaryData": {PAYLOAD_KEY: base64.b64encode(part).decode("ascii")},
        }
        if i == 0 and extra_data:
            body["data"] = dict(extra_data)
        out.append(body)
    return out


def unpack(configmaps: Sequence[Mapping[str, Any]]) -> bytes | None:
    """The payload of a complete set of chunks; ``None`` while chunks are missing.

    :raises InvalidSpec: chunks of different payloads, or a payload that does not match its digest.
    """
    if not configmaps:
        return None
    found: dict[int, bytes] = {}
    totals: set[int] = set()
    shas: set[object] = set()
    for cm in configmaps:
        notes = (cm.get("metadata") or {}).get("annotations") or {}
        index, _, of = str(notes.get(CHUNK_ANNOTATION, "")).partition("/")
        if not (index.isdigit() and of.isdigit()):
            raise errors.InvalidSpec(
                f"ConfigMap {cm['metadata'].get('name')} has no valid {CHUNK_ANNOTATION}"
            )
        totals.add(int(of))
        shas.add(notes.get(SHA_ANNOTATION))
        found[int(index)] = base64.b64decode(((cm.get("binaryData") or {}).get(PAYLOAD_KEY)) or "")
    if len(totals) != 1 or len(shas) != 1:
        raise errors.InvalidSpec("the ConfigMaps belong to different payloads")
    total = totals.pop()
    if sorted(found) != list(range(total)):
        return None
    try:
        payload = gzip.decompress(b"".join(found[i] for i in range(total)))
    except (OSError, EOFError) as exc:
        raise errors.InvalidSpec(f"the ConfigMaps do not hold a valid gzip payload: {exc}") from None
    if hashlib.sha256(payload).hexdigest() != shas.pop():
        raise errors.InvalidSpec("the payload does not match its SHA-256 annotation")
    return payload


def first_chunk_data(configmaps: Sequence[Mapping[str, Any]]) -> Mapping[str, str]:
    """``data`` of chunk 0 (the request of an input)."""
    for cm in configmaps:
        notes = (cm.get("metadata") or {}).get("annotations") or {}
        if str(notes.get(CHUNK_ANNOTATION, "")).startswith("0/"):
            data: Mapping[str, str] = cm.get("data") or {}
            return data
    return {}


# -- the job ---------------------------------------------------------------------------------------
def spark_conf(name: str, settings: SparkSettings) -> dict[str, str]:
    """The ``--conf`` settings of spark-submit."""
    template = f"{TEMPLATE_DIR}/{TEMPLATE_FILE}"
    conf = {
        "spark.kubernetes.namespace": settings.namespace,
        "spark.kubernetes.container.image": settings.image,
        "spark.kubernetes.container.image.pullPolicy": settings.pull_policy,
        "spark.kubernetes.authenticate.driver.serviceAccountName": settings.service_account,
        "spark.kubernetes.authenticate.executor.serviceAccountName": settings.service_account,
        "spark.kubernetes.driver.pod.name": f"{name}-driver",
        "spark.kubernetes.executor.podNamePrefix": name,
        "spark.kubernetes.driver.podTemplateFile": template,
        "spark.kubernetes.executor.podTemplateFile": template,
        "spark.kubernetes.driver.podTemplateContainerName": CONTAINER,
        "spark.kubernetes.executor.podTemplateContainerName": CONTAINER,
        "spark.kubernetes.submission.waitAppCompletion": "true",
        "spark.pyspark.python": "python3",
        "spark.executor.instances": str(settings.executors),
        "spark.executor.cores": str(settings.executor_cores),
        "spark.executor.memory": settings.executor_memory,
        "spark.driver.memory": settings.driver_memory,
        "spark.sql.shuffle.partitions": str(max(2, 2 * settings.executors * settings.executor_cores)),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.enabled": "false",
    }
    if settings.driver_request_cores:
        conf["spark.kubernetes.driver.request.cores"] = settings.driver_request_cores
    if settings.executor_request_cores:
        conf["spark.kubernetes.executor.request.cores"] = settings.executor_request_cores
    for key, value in labels(name).items():
        conf[f"spark.kubernetes.driver.label.{key}"] = value
        conf[f"spark.kubernetes.executor.label.{key}"] = value
    return conf


def submit_args(name: str, settings: SparkSettings, chunk_bytes: int = CHUNK_BYTES) -> list[str]:
    """spark-submit's arguments, ending with the driver program and its own arguments."""
    args = ["--master", MASTER, "--deploy-mode", "cluster", "--name", name]
    for key, value in spark_conf(name, settings).items():
        args += ["--conf", f"{key}={value}"]
    return [*args, DRIVER_APP, *driver_args(name, settings.namespace, chunk_bytes)]


def driver_args(name: str, namespace: str, chunk_bytes: int = CHUNK_BYTES) -> list[str]:
    """Arguments of the driver program (``spark_driver``)."""
    extra = [] if chunk_bytes == CHUNK_BYTES else ["--chunk-bytes", str(chunk_bytes)]
    return ["--namespace", namespace, "--job", name, *extra]


def _restricted_container() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True}


def _restricted_pod() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": USER_ID,
        "runAsGroup": USER_ID,
        "fsGroup": USER_ID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def pod_template(name: str) -> dict[str, Any]:
    """The driver's and executors' pod template (Spark fills in the rest)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"labels": labels(name)},
        "spec": {
            "securityContext": _restricted_pod(),
            "containers": [{"name": CONTAINER, "securityContext": _restricted_container()}],
        },
    }


def build_spark_job(
    name: str,
    settings: SparkSettings,
    *,
    snapshot: bytes,
    request: Mapping[str, Any],
    chunk_bytes: int = CHUNK_BYTES,
) -> SparkJobObjects:
    """The objects of one planning job (module docstring).

    :param snapshot: the cluster snapshot document (``domain.documents.snapshot`` JSON bytes).
    :param request: the plan request as ``domain.documents.plan_result.request_to_dict`` writes it.
    :raises InvalidSpec: bad job name.
    """
    check_name(name)
    ns = settings.namespace
    inputs = chunk_configmaps(
        name,
        ns,
        INPUT,
        snapshot,
        extra_data={REQUEST_KEY: json.dumps(dict(request), sort_keys=True)},
        chunk_bytes=chunk_bytes,
    )
    template_cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{name}-pod-template", "namespace": ns, "labels": labels(name, POD_TEMPLATE)},
        "data": {TEMPLATE_FILE: json.dumps(pod_template(name), indent=1, sort_keys=True)},
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": labels(name, "submit")},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": settings.timeout_seconds,
            "ttlSecondsAfterFinished": settings.ttl_seconds,
            "template": {
                "metadata": {"labels": labels(name, "submit")},
                "spec": {
                    "serviceAccountName": settings.service_account,
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": SUBMIT_GRACE_SECONDS,
                    "securityContext": _restricted_pod(),
                    "containers": [
                        {
                            "name": "spark-submit",
                            "image": settings.image,
                            "imagePullPolicy": settings.pull_policy,
                            "command": ["/bin/sh", "-c", _SUBMIT_SCRIPT, "spark-submit"],
                            "args": submit_args(name, settings, chunk_bytes),
                            "env": [
                                {"name": "KZO_SPARK_MASTER", "value": MASTER},
                                {"name": "KZO_SPARK_DRIVER", "value": f"{ns}:{name}-driver"},
                                {"name": "HOME", "value": "/tmp"},
                            ],
                            "securityContext": {**_restricted_container(), "readOnlyRootFilesystem": True},
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "512Mi"},
                                "limits": {"memory": "1Gi"},
                            },
                            "volumeMounts": [
                                {"name": "pod-template", "mountPath": TEMPLATE_DIR, "readOnly": True},
                                {"name": "tmp", "mountPath": "/tmp"},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "pod-template", "configMap": {"name": f"{name}-pod-template"}},
                        {"name": "tmp", "emptyDir": {}},
                    ],
                },
            },
        },
    }
    return SparkJobObjects(
        name=name,
        namespace=ns,
        input_configmaps=tuple(inputs),
        pod_template=template_cm,
        job=job,
        input_sha256=hashlib.sha256(snapshot).hexdigest(),
    )


def app_arguments(job: Mapping[str, Any]) -> list[str]:
    """The driver program's arguments in a built Job (what follows :data:`DRIVER_APP`)."""
    args: list[str] = job["spec"]["template"]["spec"]["containers"][0]["args"]
    return args[args.index(DRIVER_APP) + 1 :]
