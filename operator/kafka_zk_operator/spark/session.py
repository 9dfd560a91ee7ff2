"""A Spark session for the planning job that works offline and on one machine.

``local_session()`` is what ``kzo plan --engine spark``, the job's command line, the tests and the
benchmark use. Locally: no UI, the driver bound to 127.0.0.1 (no DNS lookup of the host name),
few shuffle partitions (the default 200 costs seconds on small inputs), Arrow on and without a
silent fallback, and the Python workers started with this interpreter (PySpark otherwise starts
``python3`` from ``PATH``, which may lack numpy). On Kubernetes (``spark-submit --master
k8s://...``) the master and resources come from spark-submit; the same SQL settings apply.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

#: Settings every run of the job uses, local or not.
SQL_SETTINGS = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.pyspark.fallback.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


class SparkUnavailable(RuntimeError):
    """PySpark or Java is missing; the message says what to install."""


def check_runtime() -> None:
    """:raises SparkUnavailable: PySpark is not installed or no Java runtime is found."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise SparkUnavailable(
            "the Spark engine needs PySpark: pip install 'kafka-zk-operator[spark]'"
        ) from None
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and os.path.exists(os.path.join(java_home, "bin", "java"))) and not shutil.which(
        "java"
    ):
        raise SparkUnavailable("the Spark engine needs Java 17 or later (java on PATH or JAVA_HOME)")


def shuffle_partitions(master: str) -> int:
    """Shuffle partitions for ``local[n]`` / ``local[*]``: twice the cores (at least 2)."""
    inner = master[master.find("[") + 1 : master.find("]")] if "[" in master else "1"
    cores = (os.cpu_count() or 1) if inner.startswith("*") else int(inner.split(",")[0] or 1)
    return max(2, 2 * cores)


def local_session(master: str = "local[*]", *, app_name: str = "kzo-plan", **conf: str) -> Any:
    """Get or create a SparkSession on ``master`` (module docstring); ``conf`` adds settings.

    :raises SparkUnavailable: see :func:`check_runtime`.
    """
    check_runtime()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = dict(SQL_SETTINGS)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no host-name lookup, no warning
        settings.update(
            {
                "spark.ui.enabled": "false",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.driver.host": "127.0.0.1",
                "spark.sql.shuffle.partitions": str(shuffle_partitions(master)),
            }
        )
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
