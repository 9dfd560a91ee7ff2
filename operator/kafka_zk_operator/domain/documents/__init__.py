"""The JSON documents around the placement engine: the cluster snapshot ``kzo plan`` reads
(``snapshot``) and ``kzo snapshot`` writes (``snapshot_export``), and the plan result
(``plan_result``).
"""
