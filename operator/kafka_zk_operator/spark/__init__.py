"""The PySpark engine of the placement planner (``pip install 'kafka-zk-operator[spark]'``).

Same plans as the single-process core (``domain.placement``), computed through Spark: stage 1
(broker level) on the driver, stage 2 (partition level) as a grouped Arrow UDF over a DataFrame
of partition rows, stage 3 on the driver (contract: the ``domain.placement`` docstring).

* :mod:`.session` - a Spark session that works offline (``local[*]`` by default).
* :mod:`.stage2` - the partition-level stage as ``groupBy("group").applyInArrow``.
* :mod:`.job` - :func:`~.job.run_plan` and the spark-submit-able command line.
* :mod:`.entrypoint` - the ``spark`` image's entrypoint (Spark-on-Kubernetes driver/executor).

Imports only ``domain``, numpy, pyarrow and pyspark (an import-linter contract keeps the
operator's I/O layers out).
"""
