"""Reconcile one PartitionReassignment: the single path of create, update, resume and the poll timer.

Level-based. Every call reads the resource afresh from the API server and the cluster from
ZooKeeper, works out the next step from those alone, takes it, and patches the status; nothing is
kept in memory between calls, so a hard-killed operator resumes exactly where it was:

``Pending`` → proposal (validated plan + summary; ``Failed`` with ``InvalidSpec`` and nothing
written when the request is wrong) → ``ProposalReady`` (until approved) → ``Queued`` (another
reassignment of the cluster goes first, or a foreign ``/admin/reassign_partitions`` exists) →
``Running``: per batch, throttles (recorded in the status *before* ZooKeeper is touched), the
znode, progress from the topic/state znodes, a preferred-leader election, the next batch →
``Completed`` | ``Stopped`` | ``Failed``, always with the operator's throttles removed.

Batch bookkeeping lives in ``status.progress``: ``currentBatch`` (submitted or about to be) and
``batchesDone``; a finished batch is never submitted again. A stop, or deleting the resource
(:func:`delete`), waits for the batch in flight where the backend cannot cancel it (ZooKeeper) and
cancels it at once where it can (the Admin API, ``domain.reassignment.stopping``); then the
throttles are removed.

The modules, in the order a reassignment meets them: ``entry`` (:func:`reconcile`, :func:`delete`),
``state`` (the :class:`~.state.Run` being built and its status patch), ``propose`` (proposal,
approval, stale check, start), ``queueing`` (one reassignment per cluster, foreign znodes),
``running`` (batches, progress, preferred-leader elections), ``throttles`` (write-ahead throttle
records), ``finish`` (the verdict, throttles removed); beside them ``proposals`` (plans made and
stored), ``offload`` (plans made by a Spark job) and ``execution`` (the ZooKeeper side).
"""

from __future__ import annotations

from kafka_zk_operator.service.reassignment.entry import delete as delete
from kafka_zk_operator.service.reassignment.entry import reconcile as reconcile
from kafka_zk_operator.service.reassignment.state import ReassignmentApi as ReassignmentApi
from kafka_zk_operator.service.reassignment.state import Result as Result
from kafka_zk_operator.service.reassignment.state import Settings as Settings
