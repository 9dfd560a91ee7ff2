"""The ZooKeeper → KRaft migration, as the operator sees it: which phase a cluster is in and what
that means for its writes (``phase``: a pure decision table over one probe's facts).

The facts come from ``adapters.zk.migration_probe`` (ZooKeeper) and, where ZooKeeper is gone, from
the Kafka Admin API; the decision picks the backend the topic and reassignment services write
through. Pure: no I/O.
"""
