"""The read-write lock of ctx serve and the hub: reads side by side, writes alone."""

from __future__ import annotations

import threading

import pytest

from ctx.hub.locking import LockUpgradeError, ReadWriteLock

WAIT = 60.0  # generous: the machine may be loaded; nothing here waits this long


def in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_readers_hold_it_together():
    lock = ReadWriteLock()
    inside = threading.Barrier(3, timeout=WAIT)

    def read() -> None:
        with lock.reading():
            inside.wait()  # breaks (and fails) unless all three read at once

    threads = [in_thread(read) for _ in range(3)]
    for thread in threads:
        thread.join(WAIT)
    assert not inside.broken


def test_a_writer_waits_for_the_readers_and_keeps_new_ones_out():
    lock = ReadWriteLock()
    reading, release, wrote = threading.Event(), threading.Event(), threading.Event()
    order: list[str] = []

    def reader() -> None:
        with lock.reading():
            reading.set()
            release.wait(WAIT)
            order.append("first read")

    def writer() -> None:
        with lock:
            order.append("write")
        wrote.set()

    def late_reader() -> None:
        with lock.reading():
            order.append("late read")

    first = in_thread(reader)
    assert reading.wait(WAIT)
    write = in_thread(writer)
    while not lock._waiting:  # the writer waits for the first reader
        assert write.is_alive()
        threading.Event().wait(0.01)
    late = in_thread(late_reader)
    release.set()
    for thread in (first, write, late):
        thread.join(WAIT)
    assert wrote.is_set()
    assert order == ["first read", "write", "late read"]


def test_a_reader_waiting_for_a_write_goes_before_the_next_writer():
    # Two writers in turn kept every read out: each found the other waiting.
    lock = ReadWriteLock()
    holding, release = threading.Event(), threading.Event()
    order: list[str] = []

    def first_writer() -> None:
        with lock:
            holding.set()
            release.wait(WAIT)
            order.append("first write")

    def reader() -> None:
        with lock.reading():
            order.append("read")

    def next_writer() -> None:
        with lock:
            order.append("next write")

    first = in_thread(first_writer)
    assert holding.wait(WAIT)
    read = in_thread(reader)
    while not lock._read_waiting:
        threading.Event().wait(0.01)
    write = in_thread(next_writer)
    while not lock._waiting:
        threading.Event().wait(0.01)
    release.set()
    for thread in (first, read, write):
        thread.join(WAIT)
    assert order == ["first write", "read", "next write"]


def test_it_is_reentrant_and_a_reader_cannot_start_writing():
    lock = ReadWriteLock()
    with lock, lock, lock.reading(), lock.reading():
        pass
    with lock.reading(), lock.reading(), pytest.raises(LockUpgradeError):
        lock.acquire_write()
    with lock:  # all released: another thread can write
        pass
    done = threading.Event()
    in_thread(lambda: (lock.acquire_write(), lock.release_write(), done.set()))
    assert done.wait(WAIT)
