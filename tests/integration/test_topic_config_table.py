"""Integration test: the checked-in per-line topic config table is what each Kafka line's own classes say.

For every Kafka line ``make test`` runs (its jars are cached by ``kzo dev prepare``), in one JVM per
line (``devstack/assets/TopicConfigFacts.java``):

1. ``dump`` of the line's ``LogConfig`` equals the line's entry in ``kafka_topic_configs.json``;
2. a few hundred edge values per line, generated from that entry (bounds and one step beyond,
   type extremes, every choice and near misses, every known message.format.version and unknown
   ones, whitespace), are given to the line's own ``LogConfig.fromProps`` (what a starting broker
   runs on ``/config/topics/<t>``) and ``LogConfig.validate`` (Kafka's admin path), and compared
   with ``domain.topic.config``:

   - never may the operator accept a value the starting broker refuses (that broker would not
     come back after a restart);
   - the operator refuses exactly what Kafka's admin path or a starting broker refuses, except
     where it is stricter on purpose (module docstring of ``domain.topic.config``): NaN, the
     operator-owned throttle lists, tiered-storage settings (switches ZooKeeper mode cannot honour;
     the retention checks Kafka runs when remote storage is on), 3.0-3.5 local retention
     without the total it is checked against at broker start, and segment.index.bytes below 12
     (accepted by every validator, refused by the log layer).

Also pairs of keys Kafka checks against each other. Measured: 390 to 710 probes a line, 0
dangerous, 0 unexplained disagreements on every one of the 27 lines in the table (the test runs
the lines ``make test`` runs; all 27 were run by hand when the table was generated).

Needs Java 17 (``java`` and ``javac``); fails, never skips, when they or the jars are missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.topic_config_facts import RELEASES, LineFacts
from kafka_zk_operator.domain.kafka import lines as kafka_lines
from kafka_zk_operator.domain.kafka import topic_configs
from kafka_zk_operator.domain.topic import config as tc

TABLE = json.loads(
    (Path(topic_configs.__file__).parent / topic_configs.TABLE_FILE).read_text(encoding="utf-8")
)
#: The line of each release ``make test`` runs (ZooKeeper mode, and the KRaft-only 4.x of the KRaft stack).
TESTED: dict[str, str] = {
    kafka_lines.line_name(kafka_lines.parse_line(v)): v
    for v in (*artifacts.TESTED_KAFKA_VERSIONS, *artifacts.KRAFT_ONLY_KAFKA_VERSIONS)
}

TESTED_LINES: list[str] = sorted(TESTED, key=kafka_lines.parse_line)

_INT = ("-2147483649", "-2147483648", "2147483647", "2147483648")
_LONG = ("-9223372036854775809", "-9223372036854775808", "9223372036854775807", "9223372036854775808")
_COMMON = ("", " ", "abc", "1.5", " 12 ", "-1", "0", "1")


def _numbers_around(bound: float | None) -> list[str]:
    if bound is None:
        return []
    if float(bound).is_integer():
        b = int(bound)
        return [str(b - 1), str(b), str(b + 1)]
    return [repr(bound), repr(bound - 0.01), repr(bound + 0.01)]


def _values(spec: dict[str, Any], newest: dict[str, Any] | None) -> Iterator[str]:
    """Edge values for one key of one line."""
    yield spec["default"] or ""
    yield from _COMMON
    kind, validator = spec["type"], spec["validator"]
    if kind == "int":
        yield from _INT
    if kind == "long":
        yield from _LONG
    if kind == "boolean":
        yield from ("true", "TRUE", "False", "yes", "1", " true ")
    if kind == "double":
        yield from ("0.5", "1.0", "1.01", "-0.1", "1e-1", ".5", "NaN", "half", "0.5d")
    if validator["kind"] == "range":
        yield from _numbers_around(validator["min"])
        yield from _numbers_around(validator["max"])
    if validator["kind"] in ("choices", "list-choices"):
        for choice in validator["values"]:
            yield from (choice, choice.upper(), f" {choice} ", f"{choice},")
        yield "none"
        yield ",".join(validator["values"][:2])
        yield ", ".join(validator["values"][:2])
    if newest is not None and newest["validator"]["kind"] in ("choices", "list-choices"):
        yield from newest["validator"]["values"]  # what newer lines accept
    if validator["kind"] == "throttled-replicas":
        yield from ("*", "0:1", "0:1,1:2", "0:1 , 1:2", "0-1", "*,0:1", "a:b")
    if validator["kind"] == "gzip-level":
        yield from ("-1", "0", "1", "9", "10")
    if validator["kind"] == "versions":
        known = validator["values"]
        yield from known
        yield from (f"{v}.1" for v in known if not v.startswith("0.") and "-" not in v)
        yield from ("0.10.0.1", "2.8.1", "latest", "5.0", "2.9")
        if newest is not None:
            yield from (v for v in newest["validator"]["values"] if v not in known)


#: Pairs whose values Kafka checks against each other (``validateValues``, the 3.0-3.5 constructor).
_PAIRS = (
    ("local.retention.ms", "retention.ms", ("-2", "-1", "0", "1000", "2000"), ("-1", "1000", "1500")),
    ("local.retention.bytes", "retention.bytes", ("-2", "-1", "0", "1000", "2000"), ("-1", "1000", "1500")),
    ("min.compaction.lag.ms", "max.compaction.lag.ms", ("0", "1000", "2000"), ("1", "1000", "1500")),
)


def _probes(line: str) -> list[dict[str, str]]:
    configs = TABLE["lines"][line]["configs"]
    newest = TABLE["lines"][kafka_lines.line_name(kafka_lines.NEWEST_ZK_LINE)]["configs"]
    seen: set[tuple[tuple[str, str], ...]] = set()
    probes: list[dict[str, str]] = []

    def add(config: dict[str, str]) -> None:
        if tuple(config.items()) not in seen:
            seen.add(tuple(config.items()))
            probes.append(config)

    for key, spec in configs.items():
        for value in _values(spec, newest.get(key)):
            add({key: value})
    for first, second, first_values, second_values in _PAIRS:
        if first in configs and second in configs:
            for a in first_values:
                for b in second_values:
                    add({first: a, second: b})
                    add(
                        {first: a, second: b, "remote.storage.enable": "true"}
                        if "remote.storage.enable" in configs
                        else {first: a, second: b}
                    )
    return probes


def _stricter_on_purpose(config: dict[str, str], line: kafka_lines.KafkaLine) -> bool:
    """Configs the operator refuses although Kafka accepts them (``domain.topic.config`` docstring)."""
    if config.get("remote.storage.enable", "").strip().lower() == "true":
        return True  # Kafka's tiered-storage checks, which its single-argument validate() leaves out
    for key, value in config.items():
        if key in tc.OPERATOR_OWNED_KEYS or value.strip().lower() == "nan":
            return True
        if (
            key in ("remote.log.copy.disable", "remote.log.delete.on.disable")
            and value.strip().lower() == "true"
        ):
            return True
        if key == "segment.index.bytes" and value.strip().lstrip("-").isdigit() and int(value) < 12:
            return True  # the log layer cannot create such an index (test_kafka_line_matrix.py)
        total = key.replace("local.", "", 1)
        if (3, 0, 0) <= line <= (3, 5, 0) and key.startswith("local.retention.") and total not in config:
            return True  # checked at broker start against a retention the operator cannot see: must be given
    return False


@pytest.mark.parametrize("line", TESTED_LINES)
def test_the_table_and_the_operators_checks_match_the_lines_own_classes(
    line: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp(f"facts-{line}")
    facts = LineFacts(RELEASES[line], work)
    entry = TABLE["lines"][line]
    assert facts.dump() == {"release": entry["release"], "class": entry["class"], "configs": entry["configs"]}

    probes = _probes(line)
    answers = facts.probe(probes, work)
    as_line = kafka_lines.parse_line(line)
    dangerous, disagreements = [], []
    for config, answer in zip(probes, answers, strict=True):
        ours = [str(p) for p in tc.find_config_problems(config, line=as_line)]
        if not ours and not answer["accepted_startup"]:
            dangerous.append(f"{config}: we accept, a starting {line} broker refuses ({answer['error']})")
        refused_by_kafka = not answer["accepted_validate"] or not answer["accepted_startup"]
        if bool(ours) != refused_by_kafka and not (ours and _stricter_on_purpose(config, as_line)):
            says = "refuses" if refused_by_kafka else "accepts"
            disagreements.append(f"{config}: Kafka {line} {says} ({answer['error']}); we say {ours or 'ok'}")
    print(f"Kafka {line} ({RELEASES[line]}): {len(probes)} probes")
    assert len(probes) > 200
    assert dangerous == []
    assert disagreements == []
