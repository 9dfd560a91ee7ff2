"""Java command lines for the JVM components (ZooKeeper, Kafka) with small, quick-starting heaps."""

from __future__ import annotations

import shutil
from pathlib import Path

from kafka_zk_operator.devstack.errors import StackError


def java_executable() -> str:
    java = shutil.which("java")
    if java is None:
        raise StackError("'java' is not on PATH; install Java 17 (Debian: openjdk-17-jre-headless)")
    return java


def java_argv(libs: Path, main_class: str, args: list[str], *, heap: str, log4j: Path) -> list[str]:
    return [
        java_executable(),
        f"-Xmx{heap}",
        "-Xms64m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        "-Djava.net.preferIPv4Stack=true",
        # Kafka before 1.0 unmaps index files through sun.nio.ch.DirectBuffer.cleaner(), which
        # Java 17 no longer exports (an IllegalAccessError, caught and logged, on topic deletion).
        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
        # A log4j2 configuration (Kafka 4.x, ``write_logging``) has its own system property.
        f"-Dlog4j2.configurationFile={log4j}"
        if log4j.name == LOG4J2_FILE
        else f"-Dlog4j.configuration=file:{log4j}",
        "-cp",
        f"{libs}/*",
        main_class,
        *args,
    ]


LOG4J_PROPERTIES = """\
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.controller=INFO
log4j.logger.state.change.logger=INFO
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.kafka.log.LogCleaner=WARN
"""


def write_log4j(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(LOG4J_PROPERTIES)
    return path


LOG4J2_FILE = "log4j2.properties"
LOG4J2_PROPERTIES = """\
status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.zookeeper.name = org.apache.zookeeper
logger.zookeeper.level = WARN
logger.cleaner.name = kafka.log.LogCleaner
logger.cleaner.level = WARN
"""


def write_logging(libs: Path, folder: Path) -> Path:
    """The logging configuration for the JVM of ``libs``, written into ``folder``: log4j2's
    (``log4j2.properties``) when the jars carry log4j-core 2 (Kafka 4.x), else log4j 1's."""
    if any(libs.glob("log4j-core-2*.jar")):
        path = folder / LOG4J2_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LOG4J2_PROPERTIES)
        return path
    return write_log4j(folder / "log4j.properties")
