"""JSON lines on a file descriptor: the framing of every pipe of the kernel
(supervisor to host, supervisor to worker, worker to supervisor).
"""

from __future__ import annotations

import json
import os
import selectors


def write_json_line(fd: int, message: dict) -> None:
    """Writes one message as one line, whole, even on a non-blocking descriptor.

    ASCII only (non-ASCII is escaped), so that a reader may split on newlines
    before it decodes. Values JSON cannot hold are written as their str().
    """
    write_all(fd, (json.dumps(message, separators=(',', ':'), ensure_ascii=True, default=str) + '\n').encode('ascii'))


def write_all(fd: int, data: bytes) -> None:
    """Writes every byte, waiting while a non-blocking descriptor is full."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            wait_until_writable(fd)
            continue
        view = view[written:]


def wait_until_writable(fd: int) -> None:
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_WRITE)
        selector.select()
