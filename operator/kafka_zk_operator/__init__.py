"""kafka-zk-operator: declarative topics and partition reassignments for ZooKeeper-mode Kafka.

Layers (checked by import-linter):
- ``domain``: pure model, validation, assignment, placement, planning, status; no I/O.
- ``adapters``: ZooKeeper codecs and store (kazoo), Kubernetes helpers.
- ``handlers``: thin kopf handlers, one module per custom resource.
- ``devstack``: the local ZooKeeper + Kafka + kube-apiserver stack used by ``kzo dev`` and the tests.
- ``cli``: the ``kzo`` command.
"""

__version__ = "0.1.0"
