"""KafkaTopic manifests describing existing Kafka topics exactly (for ``kzo import``).

Each manifest, applied to Kubernetes, makes the operator *adopt* the topic without writing to
ZooKeeper: ``spec.partitions``, ``spec.replicationFactor`` and ``spec.config`` are what ZooKeeper
holds, so the operator's plan is empty. Rules:

* ``spec.topicName`` is always set; ``metadata.name`` comes from :mod:`k8s_names` (stable across
  imports).
* ``spec.config`` is the topic's override set from ``/config/topics/<t>`` minus the operator-owned
  throttle keys (``leader/follower.replication.throttled.replicas``); values stay strings.
* ``spec.replicationFactor`` is the replica count of the lowest partition *after* an in-flight
  reassignment (its target), so the spec stays true when the reassignment completes.
* ``spec.deletionPolicy`` is ``Retain`` unless asked otherwise: deleting an imported resource
  (e.g. a GitOps prune) must never delete the topic.
* No ``spec.assignment``: placement stays as it is, and later changes go through
  PartitionReassignments.

:func:`topic_notes` lists what would stop the operator from adopting a topic as is (a config it
refuses, a name the CRD rejects, uneven replication factors...), for the CLI to print.
:func:`render_yaml` writes a commented, multi-document YAML stream with keys in a fixed order.

Pure functions, no I/O.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from kafka_zk_operator.domain import crd_identity
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka import topic_names
from kafka_zk_operator.domain.kafka.lines import ClusterLine
from kafka_zk_operator.domain.model import TopicAssignment
from kafka_zk_operator.domain.reassignment.replica_views import ReassignmentView, Replicas, replicas_as_of
from kafka_zk_operator.domain.topic import config as topic_config
from kafka_zk_operator.domain.topic import k8s_names

API_VERSION = crd_identity.API_VERSION
KIND = crd_identity.KAFKA_TOPIC.kind
#: The KafkaTopic CRD's ``spec.config`` limit.
MAX_CONFIG_ENTRIES = 100


class DeletionPolicy(enum.StrEnum):
    RETAIN = "Retain"
    DELETE = "Delete"


@dataclass(frozen=True, slots=True)
class ImportOptions:
    namespace: str | None = None
    cluster: str | None = None
    deletion_policy: DeletionPolicy = DeletionPolicy.RETAIN


@dataclass(frozen=True, slots=True)
class ExistingTopic:
    """One topic as ZooKeeper describes it."""

    name: str
    assignment: TopicAssignment
    #: ``/config/topics/<t>`` (empty when the znode is absent).
    config: Mapping[str, str] = field(default_factory=dict)
    #: Targets from ``/admin/reassign_partitions`` for this topic's partitions.
    pending: Mapping[int, Replicas] = field(default_factory=dict)

    def target_replicas(self) -> dict[int, Replicas]:
        replicas, _ = replicas_as_of(self.name, self.assignment, ReassignmentView.TARGET, self.pending)
        return replicas

    @property
    def replication_factor(self) -> int:
        replicas = self.target_replicas()
        return len(replicas[min(replicas)]) if replicas else 0

    @property
    def spec_config(self) -> dict[str, str]:
        return {key: self.config[key] for key in sorted(topic_config.without_operator_owned(self.config))}


@dataclass(frozen=True, slots=True)
class ImportedTopic:
    topic: str
    #: ``metadata.name``.
    name: str
    manifest: dict[str, Any]


def manifest(topic: ExistingTopic, name: str, options: ImportOptions) -> dict[str, Any]:
    """The KafkaTopic body for ``topic`` named ``name`` (keys in the order they are written)."""
    metadata: dict[str, Any] = {"name": name}
    if options.namespace:
        metadata["namespace"] = options.namespace
    spec: dict[str, Any] = {}
    if options.cluster:
        spec["cluster"] = options.cluster
    spec["topicName"] = topic.name
    spec["partitions"] = topic.assignment.partition_count
    spec["replicationFactor"] = topic.replication_factor
    config = topic.spec_config
    if config:
        spec["config"] = config
    spec["deletionPolicy"] = options.deletion_policy.value
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": metadata, "spec": spec}


def build(topics: Sequence[ExistingTopic], options: ImportOptions) -> list[ImportedTopic]:
    """Manifests for ``topics``, sorted by topic name, with unique ``metadata.name`` values."""
    names = k8s_names.derive_names(t.name for t in topics)
    return [
        ImportedTopic(t.name, names[t.name], manifest(t, names[t.name], options))
        for t in sorted(topics, key=lambda t: t.name)
    ]


def topic_notes(topic: ExistingTopic, line: ClusterLine = kafka_lines.NEWEST_ZK) -> list[str]:
    """Why the operator may not adopt ``topic`` as imported (empty when it will).

    :param line: the cluster's Kafka line, whose rules the topic's config must follow.
    """
    notes: list[str] = []
    reason = topic_names.invalid_reason(topic.name)
    if reason is not None:
        notes.append(f"the KafkaTopic CRD rejects this topic name: {reason}")
    elif topic_names.is_reserved(topic.name):
        notes.append("Kafka-internal topic: the KafkaTopic CRD refuses it and the operator never manages it")
    partitions = sorted(topic.assignment.partitions)
    if partitions != list(range(len(partitions))):
        notes.append(
            f"partition ids are not 0..{len(partitions) - 1}; the operator reports the topic znode as malformed"
        )
    counts = sorted({len(r) for r in topic.target_replicas().values()})
    if len(counts) > 1:
        notes.append(
            f"partitions have different replication factors ({', '.join(map(str, counts))}); "
            f"the spec says {topic.replication_factor} and the operator reports the others as drift"
        )
    _, moving = replicas_as_of(topic.name, topic.assignment, ReassignmentView.TARGET, topic.pending)
    if moving:
        notes.append(
            f"{len(moving)} partition(s) are being reassigned; the spec uses the target replication factor "
            "and the resource may report ReassignmentInProgress until the move completes"
        )
    config = topic.spec_config
    problems = topic_config.find_config_problems(config, topic.replication_factor, line=line)
    if problems:
        notes.append("the operator refuses this config: " + "; ".join(str(p) for p in problems))
    if len(config) > MAX_CONFIG_ENTRIES:
        notes.append(f"{len(config)} config overrides: the CRD allows at most {MAX_CONFIG_ENTRIES}")
    return notes


def header(source: str, when: datetime, count: int, policy: DeletionPolicy = DeletionPolicy.RETAIN) -> str:
    """The comment block opening every file: where, when, and what to know before applying."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    noun = "topic" if count == 1 else "topics"
    deleting = (
        "deleting a resource keeps its topic in Kafka"
        if policy is DeletionPolicy.RETAIN
        else "deleting a resource DELETES its topic in Kafka"
    )
    return (
        f"# Imported by 'kzo import' from ZooKeeper {source} at {stamp} ({count} {noun}).\n"
        "# Each KafkaTopic matches its topic as found, so applying it makes kafka-zk-operator adopt the\n"
        "# topic without writing to ZooKeeper (Ready, reason Adopted).\n"
        f"# deletionPolicy {policy.value}: {deleting}.\n"
    )


#: Strings every YAML reader takes as strings when written plain: starting with a letter, no
#: characters YAML gives a meaning to, and not a YAML 1.1 boolean or null word. Go's YAML libraries
#: (kubectl, Argo CD, Flux) read e.g. ``1e3`` as a number and ``y`` as a boolean where PyYAML
#: would write them plain, and the API server then rejects the non-string; so anything else is
#: quoted.
_PLAIN_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9._/-]*")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})

_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter when present


class _Dumper(_BaseDumper):  # type: ignore[misc]
    """Block style; strings quoted unless unambiguous for every YAML reader (see ``_PLAIN_SAFE``)."""


def _represent_str(dumper: Any, value: str) -> Any:
    plain = _PLAIN_SAFE.fullmatch(value) is not None and value.lower() not in _YAML_WORDS
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=None if plain else "'")


_Dumper.add_representer(str, _represent_str)


def render_yaml(documents: Sequence[Mapping[str, Any]], head: str = "") -> str:
    """``head`` then the documents as a YAML stream (``---`` before each), keys kept in order.

    The manifests hold only mappings and scalars (no lists), so block style needs no list indent.
    """
    body = yaml.dump_all(
        list(documents),
        Dumper=_Dumper,
        explicit_start=True,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=False,
        width=1000,
    )
    return head + (body or "")
