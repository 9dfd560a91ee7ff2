"""The PartitionReassignment resource: spec, modes registry and defaults (``spec``, ``request``,
``defaults``), the plan and its checks (``plan``, ``computed``, ``validation``), batches, throttles
and progress (``batches``, ``throttles``, ``progress``, ``replica_views``), the parsed body and
status (``resource``, ``status``, ``status_record``).
"""
