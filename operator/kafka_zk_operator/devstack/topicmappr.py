"""kafka-kit's ``topicmappr`` (github.com/DataDog/kafka-kit/v3), the peer planner that
``benchmarks/peers_bench.py`` runs side by side with this one, built once from Go modules into the
cache folder.

v3.18.1 is the last line that reads everything from ZooKeeper (v4 reads topics and brokers through
Kafka's Admin API, which needs live brokers holding every topic) and is pure Go. ``go install
pkg@version`` cannot build it (its go.mod has a replace directive), so the recipe
``assets/build-topicmappr.sh`` builds it in a wrapper module. ``KZO_TOPICMAPPR`` names a binary of
your own instead (then nothing is built).

Callers: ``kzo dev prepare``, ``benchmarks/peers_bench.py`` and ``tests/integration/test_peer_topicmappr.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kafka_zk_operator.devstack import artifacts
from kafka_zk_operator.devstack.errors import StackError

#: The Go module version of github.com/DataDog/kafka-kit/v3 whose topicmappr is built.
TOPICMAPPR_MODULE_VERSION = "v3.18.1"


def topicmappr_binary(module_version: str = TOPICMAPPR_MODULE_VERSION) -> Path:
    """The ``topicmappr`` executable, built on first use (about 20 s on 2 cores).

    :raises StackError: it cannot be built (no Go, the module proxy unreachable) or ``KZO_TOPICMAPPR``
        names no executable.
    """
    chosen = os.environ.get("KZO_TOPICMAPPR")
    if chosen:
        path = Path(chosen)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise StackError(f"KZO_TOPICMAPPR={chosen} is not an executable file; fix or unset it")
        return path
    binary = artifacts.cache_dir() / "tools" / f"topicmappr-{module_version}" / "topicmappr"
    if binary.is_file() and os.access(binary, os.X_OK):
        return binary
    artifacts._require_tool("go", "install Go >= 1.24 (the Go module proxy provides newer toolchains)")
    print(
        f"kzo: building topicmappr {module_version} from Go modules (first run only, ~20 s)...",
        file=sys.stderr,
    )
    folder = artifacts._run_recipe(
        "build-topicmappr.sh", [module_version], f"topicmappr {module_version}", "build-topicmappr.log"
    )
    built = folder / "topicmappr"
    if not built.exists():
        raise StackError(f"build-topicmappr.sh finished but {built} is missing; see the build log")
    return built
