"""kafka-zk-operator: declarative topics and partition reassignments for ZooKeeper-mode Kafka.

Layers (checked by import-linter):
- ``domain``: pure model, validation, assignment, placement, planning, status; no I/O.
- ``adapters``: ZooKeeper codecs and store (kazoo), Kubernetes helpers.
- ``handlers``: thin kopf handlers, one module per custom resource.
- ``devstack``: the local ZooKeeper + Kafka + kube-apiserver stack used by ``kzo dev`` and the tests.
- ``cli``: the ``kzo`` command.
"""

#: The version, written here only: the wheel's (pyproject.toml reads it), ``kzo --version``, ``/healthz``,
#: ``kzo_build_info``; Chart.yaml and the image label must agree (``scripts/version.py``, a unit test).
#: A release is the commit tagged ``v<version>`` (docs/versioning.md).
__version__ = "0.1.0"
