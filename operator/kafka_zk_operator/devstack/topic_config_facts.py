"""Ask a Kafka line's own classes about topic configs: the facts behind ``domain/kafka/kafka_topic_configs.json``.

``assets/TopicConfigFacts.java`` is compiled against one line's jars (``artifacts.kafka_libs``) and
run in one JVM per call: ``dump`` describes the line's ``LogConfig`` definition (types, defaults,
validators, the ``message.format.version`` strings it knows); ``probe`` says for each
``(key, value)`` whether a starting broker of that line accepts it (``LogConfig.fromProps``) and
whether its admin path does (``LogConfig.validate``); a probe may hold several keys. Used by ``scripts/generate-topic-config-table.py``
(which writes the table) and ``tests/integration/test_topic_config_table.py`` (which checks it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError

SOURCE = artifacts.ASSETS / "TopicConfigFacts.java"

#: The release whose classes stand for each line: its newest patch release.
RELEASES: dict[str, str] = {
    "0.10.0": "0.10.0.1",
    "0.10.1": "0.10.1.1",
    "0.10.2": "0.10.2.2",
    "0.11.0": "0.11.0.3",
    "1.0": "1.0.2",
    "1.1": "1.1.1",
    "2.0": "2.0.1",
    "2.1": "2.1.1",
    "2.2": "2.2.2",
    "2.3": "2.3.1",
    "2.4": "2.4.1",
    "2.5": "2.5.1",
    "2.6": "2.6.3",
    "2.7": "2.7.2",
    "2.8": "2.8.2",
    "3.0": "3.0.2",
    "3.1": "3.1.2",
    "3.2": "3.2.3",
    "3.3": "3.3.2",
    "3.4": "3.4.1",
    "3.5": "3.5.2",
    "3.6": "3.6.2",
    "3.7": "3.7.2",
    "3.8": "3.8.1",
    "3.9": "3.9.2",
    "4.0": "4.0.2",
    "4.1": "4.1.2",
}


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise StackError(
            f"'{name}' is not on PATH; install a Java 17 JDK (Debian package 'openjdk-17-jdk-headless')"
        )
    return found


class LineFacts:
    """``TopicConfigFacts`` compiled against one release's jars, ready to run."""

    def __init__(self, release: str, workdir: Path) -> None:
        self.release = release
        self.libs = artifacts.kafka_libs(release)
        self.classes = workdir / f"facts-{release}"
        self.classes.mkdir(parents=True, exist_ok=True)
        classpath = f"{self.libs}/*"
        compiled = subprocess.run(
            [_tool("javac"), "-nowarn", "-cp", classpath, "-d", str(self.classes), str(SOURCE)],
            capture_output=True,
            text=True,
            check=False,
        )
        if compiled.returncode != 0:
            raise StackError(f"javac failed for {SOURCE} against Kafka {release}: {compiled.stderr.strip()}")

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [_tool("java"), "-Xmx256m", "-cp", f"{self.libs}/*:{self.classes}", "TopicConfigFacts", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        if done.returncode != 0:
            raise StackError(
                f"TopicConfigFacts {args[0]} failed on Kafka {self.release}: {done.stderr.strip()[-2000:]}"
            )
        return done.stdout

    def dump(self) -> dict[str, Any]:
        """The line's ``LogConfig`` definition: ``{"release", "class", "configs": {key: {...}}}``."""
        facts: dict[str, Any] = json.loads(self._run("dump", self.release))
        return facts

    def probe(self, configs: Iterable[Mapping[str, str]], workdir: Path) -> list[dict[str, Any]]:
        """For each topic config: ``accepted_startup``, ``accepted_validate`` and the error."""
        listed = list(configs)
        path = workdir / f"probes-{self.release}.jsonl"
        flat = ([part for item in config.items() for part in item] for config in listed)
        path.write_text("".join(json.dumps(parts, ensure_ascii=True) + "\n" for parts in flat))
        answers = [json.loads(line) for line in self._run("probe", str(path)).splitlines() if line.strip()]
        if len(answers) != len(listed):
            raise StackError(
                f"TopicConfigFacts answered {len(answers)} of {len(listed)} probes on Kafka {self.release}"
            )
        return answers
