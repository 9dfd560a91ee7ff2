"""Entrypoint of the ``spark`` image: Spark-on-Kubernetes driver and executor, else ``kzo``.

Spark starts its driver pod with the arguments ``driver --properties-file ... --class ...
local:///...`` and its executor pods with ``executor``, and expects the image's entrypoint to turn
those into a client-mode spark-submit and a ``KubernetesExecutorBackend`` JVM (what
``entrypoint.sh`` of Apache Spark's images does). This image installs PySpark from PyPI (no Spark
distribution, no ``/opt/entrypoint.sh``), so this module does the same with ``SPARK_HOME`` =
the ``pyspark`` package directory. Any other arguments run ``kzo`` (``docker run IMAGE plan ...``).

``command(argv, env)`` is pure (tested); ``main`` replaces the process with it.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence


def spark_home(env: Mapping[str, str]) -> str:
    if env.get("SPARK_HOME"):
        return env["SPARK_HOME"]
    import pyspark

    return os.path.dirname(pyspark.__file__)


def _java(env: Mapping[str, str]) -> str:
    home = env.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else "java"


def _classpath(env: Mapping[str, str], home: str, cwd: str) -> str:
    conf = env.get("SPARK_CONF_DIR") or os.path.join(home, "conf")
    parts = [conf, os.path.join(home, "jars", "*")]
    for extra in (env.get("SPARK_EXTRA_CLASSPATH"), env.get("SPARK_DIST_CLASSPATH")):
        if extra:
            parts.append(extra)
    return ":".join([*parts, cwd])  # SPARK-43540: the working directory too


def _java_opts(env: Mapping[str, str]) -> list[str]:
    """``SPARK_JAVA_OPT_<n>`` values in numeric order."""
    keys = [k for k in env if re.fullmatch(r"SPARK_JAVA_OPT_\d+", k)]
    return [env[k] for k in sorted(keys, key=lambda k: int(k.rsplit("_", 1)[1]))]


def command(argv: Sequence[str], env: Mapping[str, str], cwd: str = "/tmp") -> list[str]:
    """The command line to execute for the container arguments ``argv``."""
    if not argv or argv[0] not in ("driver", "executor"):
        return ["kzo", *argv]
    home = spark_home(env)
    if argv[0] == "driver":
        bind = env.get("SPARK_DRIVER_BIND_ADDRESS", "")
        return [
            os.path.join(home, "bin", "spark-submit"),
            "--conf",
            f"spark.driver.bindAddress={bind}",
            "--conf",
            f"spark.executorEnv.SPARK_DRIVER_POD_IP={bind}",
            "--deploy-mode",
            "client",
            *argv[1:],
        ]
    memory = env.get("SPARK_EXECUTOR_MEMORY", "1g")
    return [
        _java(env),
        *_java_opts(env),
        f"-Xms{memory}",
        f"-Xmx{memory}",
        "-cp",
        _classpath(env, home, cwd),
        "org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend",
        *("--driver-url", env.get("SPARK_DRIVER_URL", "")),
        *("--executor-id", env.get("SPARK_EXECUTOR_ID", "")),
        *("--cores", env.get("SPARK_EXECUTOR_CORES", "1")),
        *("--app-id", env.get("SPARK_APPLICATION_ID", "")),
        *("--hostname", env.get("SPARK_EXECUTOR_POD_IP", "")),
        *("--resourceProfileId", env.get("SPARK_RESOURCE_PROFILE_ID", "0")),
        *("--podName", env.get("SPARK_EXECUTOR_POD_NAME", "")),
    ]


def main() -> None:
    env = dict(os.environ)
    if sys.argv[1:2] in (["driver"], ["executor"]):
        env.setdefault("SPARK_HOME", spark_home(env))
        env.setdefault("PYSPARK_PYTHON", sys.executable)
    cmd = command(sys.argv[1:], env, os.getcwd())
    os.execvpe(cmd[0], cmd, env)


if __name__ == "__main__":
    main()
