"""Use cases that combine the pure core with the ZooKeeper store: read → plan → apply → report.

Nothing here imports kopf; handlers call these functions and translate their results into
status patches, Kubernetes Events and retries.
"""
