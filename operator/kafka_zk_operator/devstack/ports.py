"""Loopback port helpers: find free ports, refuse ports that are taken."""

from __future__ import annotations

import socket

from kafka_zk_operator.devstack.errors import PortInUse

LOOPBACK = "127.0.0.1"


def is_port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """An ephemeral port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def claim(port: int, what: str) -> int:
    """Return ``port`` if it is free, else raise ``PortInUse`` naming the component."""
    if not is_port_free(port):
        raise PortInUse(port, what)
    return port


def port_open(port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on 127.0.0.1:``port``."""
    try:
        with socket.create_connection((LOOPBACK, port), timeout=timeout):
            return True
    except OSError:
        return False
