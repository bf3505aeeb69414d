"""The supervisor's channel to the host: JSON lines on its stdout, each one
authenticated with HMAC-SHA256 under a per-session key.

The host sends the key as the first line on the supervisor's stdin
(`{"type":"hello","key":"<64 hex>"}`), never through the environment or argv,
which the worker could read. The key lives only in this process's memory (the
supervisor is not dumpable, and the worker is exec'd, so it holds no copy).

A frame is `<64 hex MAC> <json>\n`; the MAC covers the frame's sequence number
(0 for `ready`, counting up) and the JSON bytes, so a line written by anyone
else — or replayed, or reordered — fails the host's check and ends the session.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os

from datalyst_json_lines import write_all

MAX_HELLO_BYTES = 4096
KEY_BYTES = 32


class HelloRefused(Exception):
    """The host's first line was not a usable hello."""


def read_hello(fd: int) -> tuple[bytes, bytes]:
    """Blocks until the host's first line; returns the key and the bytes read past that line."""
    buffer = bytearray()
    while b'\n' not in buffer:
        if len(buffer) > MAX_HELLO_BYTES:
            raise HelloRefused('the first line is longer than %d bytes' % MAX_HELLO_BYTES)
        data = os.read(fd, MAX_HELLO_BYTES)
        if not data:
            raise HelloRefused('stdin closed before the hello')
        buffer += data
    line, _, rest = bytes(buffer).partition(b'\n')
    try:
        hello = json.loads(line)
        key = bytes.fromhex(hello['key']) if hello.get('type') == 'hello' else b''
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise HelloRefused('the first line is not a hello: %s' % error) from None
    if len(key) != KEY_BYTES:
        raise HelloRefused('the hello carries no %d-byte key' % KEY_BYTES)
    return key, rest


class HostChannel:
    """Writes authenticated frames to the host, in order."""

    def __init__(self, fd: int, key: bytes) -> None:
        self.fd = fd
        self.key = key
        self.sequence = 0

    def send(self, message: dict) -> None:
        # ASCII only (non-ASCII escaped): the host splits on newlines before it decodes.
        data = json.dumps(message, separators=(',', ':'), ensure_ascii=True, default=str).encode('ascii')
        mac = hmac.new(self.key, b'%d\n' % self.sequence + data, hashlib.sha256).hexdigest().encode('ascii')
        self.sequence += 1
        write_all(self.fd, mac + b' ' + data + b'\n')
