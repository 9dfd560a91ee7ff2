"""Thin kopf handlers, one module per custom resource. They delegate to ``service``."""
