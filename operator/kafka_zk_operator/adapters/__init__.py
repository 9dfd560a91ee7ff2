"""Adapters at the edges: ZooKeeper (kazoo) and Kubernetes. They translate to and from ``domain``."""
