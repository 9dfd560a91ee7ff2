#!/usr/bin/env python3
"""Write ``operator/kafka_zk_operator/domain/kafka/kafka_topic_configs.json`` from each Kafka line's own classes.

For every line the operator supports (``devstack.topic_config_facts.RELEASES``: the newest patch of
each line, 0.10.0.1 to 3.9.2 and the KRaft-only 4.0.2 and 4.1.2) the jars are fetched from Maven
Central (cached), the line's
``LogConfig`` definition is read by ``TopicConfigFacts dump`` in a JVM, and the result is written
as one checked-in table that ``domain.kafka.topic_configs`` loads. A validator the table cannot express
stops the script: map it in ``TopicConfigFacts.java`` and ``domain/kafka/topic_configs.py`` first.
``tests/integration/test_topic_config_table.py`` re-runs the dump for the lines ``make test`` runs
and compares.

Usage: ``.venv/bin/python scripts/generate-topic-config-table.py`` (first run: ~20 s a line to
fetch the jars; later runs ~1 min for all 27 lines on a 2-core machine). With ``--lines 4.0,4.1``
only those lines are dumped again and the others are kept as the checked-in table has them (how
the 4.0 and 4.1 lines were added; a full run writes the same bytes for the lines it keeps).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack.topic_config_facts import RELEASES, LineFacts

TABLE = (
    Path(__file__).resolve().parents[1]
    / "operator"
    / "kafka_zk_operator"
    / "domain"
    / "kafka"
    / "kafka_topic_configs.json"
)
KNOWN_KINDS = {"range", "choices", "list-choices", "throttled-replicas", "versions", "gzip-level", "none"}


def render(lines: dict[str, dict[str, Any]]) -> str:
    """The table as JSON with one config key a line, so that a new Kafka line reads as a small diff."""
    out = [
        "{",
        '"source": "scripts/generate-topic-config-table.py: each line\'s LogConfig (kafka.log.LogConfig, '
        'org.apache.kafka.storage.internals.log.LogConfig) read by devstack/assets/TopicConfigFacts.java",',
        '"lines": {',
    ]
    for i, (name, facts) in enumerate(lines.items()):
        out.append(
            f'{json.dumps(name)}: {{"release": {json.dumps(facts["release"])}, "class": {json.dumps(facts["class"])}, "configs": {{'
        )
        keys = list(facts["configs"].items())
        for j, (key, spec) in enumerate(keys):
            out.append(f"  {json.dumps(key)}: {json.dumps(spec)}" + ("," if j < len(keys) - 1 else ""))
        out.append("}}" + ("," if i < len(lines) - 1 else ""))
    out.extend(["}", "}", ""])
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--lines",
        default="",
        help="comma-separated lines to dump again (e.g. 4.0,4.1); the others stay as checked in",
    )
    args = parser.parse_args(argv)
    only = [name.strip() for name in args.lines.split(",") if name.strip()]
    unknown = [name for name in only if name not in RELEASES]
    if unknown:
        print(f"--lines: {', '.join(unknown)} not in RELEASES ({', '.join(RELEASES)})", file=sys.stderr)
        return 2
    kept: dict[str, dict[str, Any]] = json.loads(TABLE.read_text(encoding="utf-8"))["lines"] if only else {}
    lines: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as work:
        for name, release in RELEASES.items():
            if only and name not in only:
                if name not in kept:
                    print(f"the table has no {name} line to keep: add it to --lines", file=sys.stderr)
                    return 2
                lines[name] = kept[name]
                continue
            print(f"Kafka {release} ...", file=sys.stderr, flush=True)
            facts = LineFacts(release, Path(work)).dump()
            odd = {
                k: v["validator"]
                for k, v in facts["configs"].items()
                if v["validator"]["kind"] not in KNOWN_KINDS
            }
            if odd:
                print(f"Kafka {release}: validators the table cannot express yet: {odd}", file=sys.stderr)
                return 1
            lines[name] = facts
    TABLE.write_text(render(lines), encoding="utf-8")
    json.loads(TABLE.read_text(encoding="utf-8"))  # it must stay valid JSON
    print(f"wrote {TABLE} ({len(lines)} lines)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
