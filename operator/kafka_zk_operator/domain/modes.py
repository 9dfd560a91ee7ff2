"""The reassignment modes: one list for the whole product.

A mode's value is its name in ``PartitionReassignment.spec.mode`` (``AddBrokers``); the planning
CLI, the Spark job and plan documents spell the engine's modes in lower case with dashes
(``add-brokers``: :attr:`Mode.cli_name`). :meth:`Mode.parse` reads either spelling. What each
mode does is its rule in ``domain.reassignment.request.MODES``; the placement engine plans the
modes in :data:`ENGINE_MODES`.
"""

from __future__ import annotations

import enum
import re

from kafka_zk_operator.domain import errors


class Mode(enum.StrEnum):
    """``spec.mode``: what a reassignment (or a plan) is for."""

    EXPLICIT = "Explicit"
    ADD_BROKERS = "AddBrokers"
    REMOVE_BROKERS = "RemoveBrokers"
    REBALANCE = "Rebalance"
    REPLICATION_FACTOR = "ReplicationFactor"
    DEMOTE_BROKERS = "DemoteBrokers"

    @property
    def cli_name(self) -> str:
        """The spelling of the command line and of plan documents: ``AddBrokers`` -> ``add-brokers``."""
        return re.sub(r"(?<!^)(?=[A-Z])", "-", self.value).lower()

    @classmethod
    def parse(cls, text: str) -> Mode:
        """``AddBrokers`` or ``add-brokers``.

        :raises InvalidSpec: no mode has that name.
        """
        for mode in cls:
            if text in (mode.value, mode.cli_name):
                return mode
        known = ", ".join(m.cli_name for m in cls)
        raise errors.InvalidSpec(f"unknown mode {text!r} (known: {known})")


#: The modes the placement engine plans (the others are planned by their rule alone).
ENGINE_MODES = (Mode.ADD_BROKERS, Mode.REMOVE_BROKERS, Mode.REBALANCE, Mode.REPLICATION_FACTOR)
