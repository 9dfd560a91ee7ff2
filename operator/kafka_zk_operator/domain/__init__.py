"""The pure core: model, validation, assignment, placement, planning and status building.

Nothing in this package performs I/O or imports kopf, kazoo, kubernetes or pyspark
(an import-linter contract in ``pyproject.toml`` checks it). Adapters translate the outside
world into these types; handlers call planning functions and apply their results.
"""
