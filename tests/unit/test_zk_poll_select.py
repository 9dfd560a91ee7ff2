"""The ``poll(2)``-based ``select`` that kazoo's connection thread uses (adapters.zk.session)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from kafka_zk_operator.adapters.zk.session import _WatchfulHandler, poll_select


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    left, right = socket.socketpair()
    yield left, right
    left.close()
    right.close()


def test_nothing_to_read_times_out_empty(pair: tuple[socket.socket, socket.socket]) -> None:
    left, _ = pair
    assert poll_select([left], [], [], 0.01) == ([], [], [])


def test_data_waiting_is_readable(pair: tuple[socket.socket, socket.socket]) -> None:
    left, right = pair
    right.sendall(b"x")
    readable, writable, _ = poll_select([left, right], [], [], 1.0)
    assert readable == [left]
    assert writable == []


def test_a_socket_with_room_is_writable(pair: tuple[socket.socket, socket.socket]) -> None:
    left, _ = pair
    assert poll_select([], [left], [], 0) == ([], [left], [])


def test_a_hung_up_peer_counts_as_readable(pair: tuple[socket.socket, socket.socket]) -> None:
    left, right = pair
    right.close()
    readable, _, _ = poll_select([left], [], [], None)  # would block forever if not ready
    assert readable == [left]
    assert left.recv(1) == b""  # the read that follows sees the end


def test_plain_descriptors_are_accepted(pair: tuple[socket.socket, socket.socket]) -> None:
    left, right = pair
    right.sendall(b"x")
    assert poll_select([left.fileno()], [], [], 1.0)[0] == [left.fileno()]


def test_a_closed_socket_is_refused(pair: tuple[socket.socket, socket.socket]) -> None:
    left, _ = pair
    left.close()
    with pytest.raises(ValueError, match="Invalid event mask or fd"):
        poll_select([left], [], [], 0)


def test_the_handler_selects_with_it(pair: tuple[socket.socket, socket.socket]) -> None:
    left, right = pair
    right.sendall(b"x")
    assert _WatchfulHandler().select([left], [], [], 1.0) == ([left], [], [])
