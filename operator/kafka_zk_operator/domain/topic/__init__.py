"""The KafkaTopic resource: its parsed body (``resource``), config checks (``config``), planning
(``plan``, ``planning``, ``new_partitions``), deletion (``deletion``), status (``status``) and ``kzo
import`` (``importing``, ``k8s_names``).
"""
