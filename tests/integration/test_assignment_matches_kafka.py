"""Integration test: our assignment and topic-name ports give exactly what Kafka 3.9.2's own code gives.

Generates a few hundred seeded random cases, runs them through ``java/AssignmentOracle.java``
(Kafka's ``AdminUtils.assignReplicasToBrokers``, ``AdminZkClient.createNewPartitionsAssignment``
and ``Topic``, from the real jars that ``scripts/fetch-kafka.sh`` caches) in ONE JVM, and
compares every answer, errors included, with ``domain.kafka.assignment`` and ``domain.kafka.topic_names``.
Needs Java 17 (``java`` and ``javac``); fails, never skips, when they or the jars are missing.
"""

from __future__ import annotations

import functools
import random
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafka_zk_operator.domain import errors
from kafka_zk_operator.domain.kafka import assignment, topic_names
from kafka_zk_operator.domain.model import Broker

pytestmark = pytest.mark.integration

KAFKA_VERSION = "3.9.2"
REPO = Path(__file__).resolve().parents[2]
ORACLE_SOURCE = Path(__file__).parent / "java" / "AssignmentOracle.java"
SEED = 20261122

N_ASSIGN_CASES = 600
N_NEW_PARTITION_CASES = 200
N_TOPIC_CASES = 300
N_COLLISION_CASES = 150

#: Kafka exception (simple class name) → the domain error our port raises for the same input.
KAFKA_TO_DOMAIN_ERROR: dict[str, type[errors.KzoError]] = {
    "InvalidPartitionsException": errors.InvalidPartitions,
    "InvalidReplicationFactorException": errors.InvalidReplicationFactor,
    "AdminOperationException": errors.InvalidSpec,
}

RACK_POOLS = (
    ["r1", "r2", "r3", "r4"],
    ["rack-a", "rack-b", "Rack-C", "rack.d"],
    ["", "B", "a", "\uff01", "\U0001f600", "é"],  # Java String order differs from code points here
)


# --- cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AssignCase:
    brokers: list[Broker]
    n_partitions: int
    replication_factor: int
    fixed_start_index: int
    start_partition_id: int

    def line(self) -> str:
        return (
            f"A {self.n_partitions} {self.replication_factor} {self.fixed_start_index} "
            f"{self.start_partition_id} {encode_brokers(self.brokers)}"
        )


@dataclass(frozen=True)
class NewPartitionsCase:
    existing: dict[int, list[int]]
    brokers: list[Broker]
    new_count: int

    def line(self) -> str:
        existing = ";".join(
            f"{p}={','.join(str(r) for r in replicas)}" for p, replicas in sorted(self.existing.items())
        )
        return f"N {self.new_count} {encode_brokers(self.brokers)} {existing}"


def hex_utf8(text: str) -> str:
    return text.encode("utf-8").hex()


def encode_brokers(brokers: Sequence[Broker]) -> str:
    if not brokers:
        return "-"
    return ",".join(str(b.id) if b.rack is None else f"{b.id}:{hex_utf8(b.rack)}" for b in brokers)


def random_brokers(rng: random.Random, n: int, racked: bool) -> list[Broker]:
    ids = rng.sample(range(40) if rng.random() < 0.7 else range(5000), n)
    if rng.random() < 0.5:
        ids.sort()
    if not racked:
        return [Broker(i) for i in ids]
    racks = rng.sample(rng.choice(RACK_POOLS), rng.randint(1, 4))
    return [Broker(i, rng.choice(racks)) for i in ids]


def make_assign_cases(rng: random.Random) -> list[AssignCase]:
    cases = []
    for _ in range(N_ASSIGN_CASES):
        n = rng.randint(1, 12)
        brokers = random_brokers(rng, n, racked=rng.random() < 0.55)
        rf = rng.randint(1, n)
        partitions = rng.randint(1, 60)
        start = rng.randint(0, n - 1) if rng.random() < 0.8 else rng.randint(0, 3 * n)
        start_partition = rng.choice([-1, 0, rng.randint(0, 100)])
        trouble = rng.random()
        if trouble < 0.03:
            partitions = rng.choice([0, -1])
        elif trouble < 0.06:
            rf = rng.choice([0, -1, n + 1])
        elif trouble < 0.09 and n > 1 and brokers[0].rack is not None:
            victim = rng.randrange(n)
            brokers[victim] = Broker(brokers[victim].id)  # only some brokers have a rack
        elif trouble < 0.10:
            brokers, rf = [], rng.randint(1, 2)
        cases.append(AssignCase(brokers, partitions, rf, start, start_partition))
    return cases


def make_new_partition_cases(rng: random.Random) -> list[NewPartitionsCase]:
    cases = []
    for _ in range(N_NEW_PARTITION_CASES):
        n = rng.randint(1, 12)
        brokers = random_brokers(rng, n, racked=rng.random() < 0.5)
        if rng.random() < 0.8:
            brokers.sort(key=lambda b: b.id)  # as AdminZkClient.getBrokerMetadatas hands them over
        ids = [b.id for b in brokers]
        rf = rng.randint(1, n)
        current = rng.randint(1, 20)
        candidates = [*ids, rng.randint(0, 6000)]  # partition 0's leader may be a broker that is gone
        existing = {p: rng.sample(candidates, min(rf, len(candidates))) for p in range(current)}
        new_count = current + rng.randint(1, 30)
        trouble = rng.random()
        if trouble < 0.04:
            new_count = rng.choice([current, current - 1])
        elif trouble < 0.07:
            existing = {p + 1: replicas for p, replicas in existing.items()}  # partition 0 missing
        elif trouble < 0.10:
            existing[0] = rng.sample(range(6000), n + 1)  # more replicas than brokers
        cases.append(NewPartitionsCase(existing, brokers, new_count))
    return cases


NAME_ALPHABET = "abcXYZ019._-" * 4 + " /:é\t\U0001f600\uff01@"
SPECIAL_NAMES = [
    "", ".", "..", "...", "a", "__consumer_offsets", "__transaction_state", "__share_group_state",
    "__cluster_metadata", "a" * 249, "a" * 250, "\U0001f600" * 124, "\U0001f600" * 125, "é" * 249,
    "my.topic", "my_topic", "my-topic",
]  # fmt: skip


def make_topic_names(rng: random.Random) -> list[str]:
    names = list(SPECIAL_NAMES)
    while len(names) < N_TOPIC_CASES:
        length = rng.choice([rng.randint(0, 12), rng.randint(240, 260)])
        alphabet = NAME_ALPHABET if rng.random() < 0.5 else "abc._-"
        names.append("".join(rng.choice(alphabet) for _ in range(length)))
    return names


def make_collision_pairs(rng: random.Random) -> list[tuple[str, str]]:
    pairs = []
    for _ in range(N_COLLISION_CASES):
        a = "".join(rng.choice("ab._") for _ in range(rng.randint(1, 6)))
        b = "".join(rng.choice("._") if ch in "._" and rng.random() < 0.7 else ch for ch in a)
        if rng.random() < 0.2:
            b += rng.choice("a_")
        pairs.append((a, b))
    return pairs


# --- running Kafka's code ---------------------------------------------------------------------


@dataclass(frozen=True)
class OracleRun:
    assign: list[tuple[AssignCase, str]]
    new_partitions: list[tuple[NewPartitionsCase, str]]
    names: list[tuple[str, str]]
    collisions: list[tuple[tuple[str, str], str]]


def _require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"'{name}' not found on PATH: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)"
        )
    return path


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    script = REPO / "scripts" / "fetch-kafka.sh"
    result = subprocess.run(
        ["bash", str(script), KAFKA_VERSION], capture_output=True, text=True, timeout=1800, check=False
    )
    if result.returncode != 0 or not result.stdout.strip():
        pytest.fail(
            f"{script} {KAFKA_VERSION} failed (exit {result.returncode}): {result.stderr.strip()[-2000:]}"
        )
    libs = Path(result.stdout.strip().splitlines()[-1])
    if not list(libs.glob("kafka-server-common-*.jar")) or not list(libs.glob("kafka_2.13-*.jar")):
        pytest.fail(f"Kafka jars missing in {libs}: delete the folder and rerun {script} {KAFKA_VERSION}")
    return libs


@pytest.fixture(scope="module")
def oracle(kafka_libs: Path, tmp_path_factory: pytest.TempPathFactory) -> OracleRun:
    javac, java = _require_tool("javac"), _require_tool("java")
    classes = tmp_path_factory.mktemp("oracle-classes")
    classpath = f"{kafka_libs}/*"
    compiled = subprocess.run(
        [javac, "-cp", classpath, "-d", str(classes), str(ORACLE_SOURCE)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if compiled.returncode != 0:
        pytest.fail(f"javac failed for {ORACLE_SOURCE}:\n{compiled.stderr}")

    rng = random.Random(SEED)
    assign_cases = make_assign_cases(rng)
    new_partition_cases = make_new_partition_cases(rng)
    names = make_topic_names(rng)
    pairs = make_collision_pairs(rng)
    lines = [case.line() for case in assign_cases]
    lines += [case.line() for case in new_partition_cases]
    lines += [f"T {hex_utf8(name)}" for name in names]
    lines += [f"C {hex_utf8(a)} {hex_utf8(b)}" for a, b in pairs]

    ran = subprocess.run(
        [java, "-cp", f"{classes}:{classpath}", "AssignmentOracle"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=False,
    )
    if ran.returncode != 0:
        pytest.fail(f"AssignmentOracle failed (exit {ran.returncode}):\n{ran.stderr[-4000:]}")
    answers = ran.stdout.splitlines()
    assert len(answers) == len(lines), f"oracle answered {len(answers)} of {len(lines)} cases:\n{ran.stderr}"

    a, n, t = len(assign_cases), len(new_partition_cases), len(names)
    return OracleRun(
        assign=list(zip(assign_cases, answers[:a], strict=True)),
        new_partitions=list(zip(new_partition_cases, answers[a : a + n], strict=True)),
        names=list(zip(names, answers[a + n : a + n + t], strict=True)),
        collisions=list(zip(pairs, answers[a + n + t :], strict=True)),
    )


# --- comparing --------------------------------------------------------------------------------


def ours(compute: Callable[[], dict[int, list[int]]]) -> str:
    """Our answer in the oracle's notation (errors mapped to the Kafka exception they stand for)."""
    try:
        result = compute()
    except errors.KzoError as exc:
        kafka_names = [k for k, v in KAFKA_TO_DOMAIN_ERROR.items() if type(exc) is v]
        return f"ERR {kafka_names[0] if kafka_names else type(exc).__name__} {exc}"
    return "OK " + ";".join(
        f"{p}={','.join(str(r) for r in replicas)}" for p, replicas in sorted(result.items())
    )


def same(kafka: str, mine: str, *, compare_messages: bool) -> bool:
    if kafka.startswith("OK ") or mine.startswith("OK "):
        return kafka == mine
    _, kafka_type, kafka_hex = kafka.split(" ", 2)
    _, my_type, my_message = mine.split(" ", 2)
    if kafka_type != my_type:
        return False
    # Our messages start with Kafka's sentence (minus its full stop) and then add a hint.
    return not compare_messages or my_message.startswith(bytes.fromhex(kafka_hex).decode().rstrip("."))


def report(mismatches: list[str]) -> str:
    return f"{len(mismatches)} mismatches with Kafka, first ones:\n" + "\n".join(mismatches[:8])


def test_assign_replicas_to_brokers_matches_kafka(oracle: OracleRun) -> None:
    mismatches = []
    for case, kafka in oracle.assign:
        mine = ours(
            functools.partial(
                assignment.assign_replicas_to_brokers,
                case.brokers,
                case.n_partitions,
                case.replication_factor,
                fixed_start_index=case.fixed_start_index,
                start_partition_id=case.start_partition_id,
            )
        )
        if not same(kafka, mine, compare_messages=True):
            mismatches.append(f"{case.line()}\n  kafka: {kafka}\n  ours:  {mine}")
    assert not mismatches, report(mismatches)

    # The generator must really have covered both algorithms and every refusal.
    outcomes = Counter(kafka.split(" ")[1] if kafka.startswith("ERR") else "OK" for _, kafka in oracle.assign)
    assert len(oracle.assign) == N_ASSIGN_CASES
    assert set(outcomes) == {"OK", *KAFKA_TO_DOMAIN_ERROR}, outcomes
    racked_ok = sum(
        1 for case, kafka in oracle.assign if kafka.startswith("OK") and case.brokers[0].rack is not None
    )
    assert racked_ok > 200 and outcomes["OK"] - racked_ok > 200


def test_new_partitions_assignment_matches_kafka(oracle: OracleRun) -> None:
    mismatches = []
    for case, kafka in oracle.new_partitions:
        mine = ours(
            functools.partial(assignment.assign_new_partitions, case.existing, case.brokers, case.new_count)
        )
        if not same(kafka, mine, compare_messages=False):
            mismatches.append(f"{case.line()}\n  kafka: {kafka}\n  ours:  {mine}")
    assert not mismatches, report(mismatches)
    assert sum(1 for _, kafka in oracle.new_partitions if kafka.startswith("OK")) > 150


def test_topic_name_rules_match_kafka(oracle: OracleRun) -> None:
    mismatches = []
    for name, kafka in oracle.names:
        reason = topic_names.invalid_reason(name)
        message = "-" if reason is None else hex_utf8(f"Topic name is invalid: {reason}")
        mine = (
            f"T {int(topic_names.is_valid(name))} {int(topic_names.is_internal(name))} "
            f"{int(topic_names.has_collision_chars(name))} {message}"
        )
        if kafka != mine:
            mismatches.append(f"{name!r}\n  kafka: {kafka}\n  ours:  {mine}")
    assert not mismatches, report(mismatches)
    valid = sum(1 for _, kafka in oracle.names if kafka.startswith("T 1"))
    assert 50 < valid < len(oracle.names) - 50


def test_collision_rule_matches_kafka(oracle: OracleRun) -> None:
    mismatches = [
        f"{a!r} vs {b!r}: kafka {kafka}"
        for (a, b), kafka in oracle.collisions
        if kafka != f"C {int(topic_names.has_collision(a, b))}"
    ]
    assert not mismatches, report(mismatches)
    assert {kafka for _, kafka in oracle.collisions} == {"C 0", "C 1"}
