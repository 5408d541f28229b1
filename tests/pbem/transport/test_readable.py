"""Waiting on descriptors works whatever their numbers: select() refuses those from 1024
up, which a daemon with many connections or files open can reach."""

from __future__ import annotations

import os
import resource
import socket
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from pbem.run.wakeup import Wakeup
from pbem.transport.readable import readable


@pytest.fixture
def high_pipe() -> Iterator[tuple[int, int]]:
    """A pipe whose descriptors are numbered above 1024."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    r, w = os.pipe()
    high_r, high_w = os.dup2(r, 2000), os.dup2(w, 2001)
    os.close(r)
    os.close(w)
    try:
        yield high_r, high_w
    finally:
        os.close(high_r)
        os.close(high_w)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_descriptor_above_1024_is_waited_on(high_pipe: tuple[int, int]) -> None:
    r, w = high_pipe
    assert readable([r], 0.01) == []
    os.write(w, b"!")
    assert readable([r], 1.0) == [r]


def test_sockets_and_descriptors_come_back_in_the_order_given() -> None:
    left, right = socket.socketpair()
    r, w = os.pipe()
    try:
        right.send(b"x")
        os.write(w, b"x")
        assert readable([r, left], 1.0) == [r, left]
        assert readable([left, r, left], 1.0) == [left, r, left]
    finally:
        for s in (left, right):
            s.close()
        os.close(r)
        os.close(w)


def test_a_wakeup_waits_with_a_high_descriptor_beside_it(
    high_pipe: tuple[int, int], db_engine: Engine
) -> None:
    r, w = high_pipe
    wakeup = Wakeup(db_engine)
    try:
        assert wakeup.wait(0.01, also=[r]) is False
        os.write(w, b"!")
        assert wakeup.wait(1.0, also=[r]) is True
    finally:
        wakeup.close()
