"""Whole messages over a worker's pipe, read and written without ever blocking unboundedly.

A multiprocessing.Queue's get(timeout=) bounds only the wait for a message's first byte:
once it has begun, the read blocks until the last byte, forever if the writer was killed
mid-send (the main process holds a write end too, so no end of file ever comes).  Here
each worker owns one pipe whose write end only it holds; both ends are non-blocking.  The
main process reads whatever bytes are there, assembles length-prefixed frames and hands
out only complete ones, so between reads it can check that the workers are alive and that
`timeout=` has not passed; a dead worker's partial frame is never unpickled.  POSIX only:
the pipes are waited on with select."""
from __future__ import annotations

import fcntl
import os
import select
import struct
from collections.abc import Callable
from typing import Any

_HEADER = struct.Struct("<Q")  # the payload's length in bytes
_CHECK_S = 1.0  # how often a writer blocked on a full pipe checks that its reader lives
_DRAIN_CHUNK = 1 << 20
_PIPE_BYTES = 1 << 20


def send_frame(conn: Any, payload: bytes, reader_alive: Callable[[], bool]) -> bool:
    """Write one frame to `conn`'s pipe, waiting while the pipe is full; False (nothing
    more can be sent) once the reader is gone."""
    fd = conn.fileno()
    os.set_blocking(fd, False)
    for part in (_HEADER.pack(len(payload)), payload):
        view = memoryview(part)
        while view:
            _, writable, _ = select.select([], [fd], [], _CHECK_S)
            if not writable:
                if not reader_alive():
                    return False
                continue
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                return False
    return True


class FrameReader:
    """The main process's end of one worker's pipe: complete frames, as they come."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.fd: int = conn.fileno()
        os.set_blocking(self.fd, False)
        if hasattr(fcntl, "F_SETPIPE_SZ"):  # Linux: 1 MiB, not 64 KiB, per wake-up
            try:
                fcntl.fcntl(self.fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            except OSError:  # above /proc/sys/fs/pipe-max-size: keep the default
                pass
        self.header = bytearray(_HEADER.size)
        self.body: bytearray | None = None  # the frame being filled, once its size is known
        self.filled = 0
        self.closed = False  # end of file: the worker has exited

    def fileno(self) -> int:
        return self.fd

    def frames(self) -> list[bytearray]:
        """The frames completed by the bytes the pipe holds now (never waits)."""
        done: list[bytearray] = []
        while not self.closed:
            target = self.header if self.body is None else self.body
            if self.filled == len(target):
                self._completed(target, done)
                continue
            try:
                n = os.readv(self.fd, [memoryview(target)[self.filled:]])
            except BlockingIOError:
                break
            if n == 0:
                self.closed = True
            self.filled += n
        return done

    def _completed(self, target: bytearray, done: list[bytearray]) -> None:
        if self.body is None:
            self.body = bytearray(_HEADER.unpack(target)[0])
        else:
            done.append(self.body)
            self.body = None
        self.filled = 0

    def discard(self) -> None:
        """Read and drop what the pipe holds, so that a worker blocked mid-send can finish
        and exit when it is asked to."""
        try:
            while os.read(self.fd, _DRAIN_CHUNK):
                pass
            self.closed = True
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        self.conn.close()
