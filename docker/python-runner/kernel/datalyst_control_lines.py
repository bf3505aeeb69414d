"""The worker's control messages as the supervisor reads them: JSON objects, one a line.

The control pipe is open in the worker, so the cell's code can write anything
to it. Whatever it writes must cost the supervisor (PID 1, the only holder of
the host channel) little and never stop it: a line that is not a JSON object
is dropped (a bare `[]` once raised AttributeError in the supervisor's loop and
ended the session), blank lines are skipped at C speed and never logged one by
one (16 MiB of newlines once kept the supervisor busy past the host's answer
timer), and a line longer than the host would accept is discarded as it comes.
"""

from __future__ import annotations

import json
import re

# The host refuses a frame longer than this (kernel-connection.ts MAX_LINE_BYTES):
# a longer `done` could never reach it as a result anyway.
MAX_LINE_BYTES = 192 << 20
NOT_BLANK = re.compile(rb'[^\s]')


class ControlLines:
    """Splits the bytes read from the control pipe into messages, in order."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.max_line_bytes = max_line_bytes
        self.partial = bytearray()
        self.discarding = False  # inside a line too long to keep: drop up to its end
        self.refused = 0  # lines dropped since the last `take_refused`

    def feed(self, data: bytes) -> list[dict]:
        messages: list[dict] = []
        start = 0
        if self.discarding:
            newline = data.find(b'\n')
            if newline < 0:
                return messages
            self.discarding = False
            start = newline + 1
        if self.partial:
            newline = data.find(b'\n', start)
            if newline < 0:
                self.keep(data[start:])
                return messages
            self.partial += data[start:newline]
            self.parse(bytes(self.partial), messages)
            self.partial.clear()
            start = newline + 1
        while True:
            found = NOT_BLANK.search(data, start)
            if found is None:
                return messages
            newline = data.find(b'\n', found.start())
            if newline < 0:
                self.keep(data[found.start():])
                return messages
            if data[found.start()] == 0x7b:  # `{`: anything else is no object, not worth parsing
                self.parse(data[found.start():newline], messages)
            else:
                self.refused += 1
            start = newline + 1

    def keep(self, piece: bytes) -> None:
        if len(self.partial) + len(piece) > self.max_line_bytes:
            self.partial.clear()
            self.discarding = True
            self.refused += 1
            return
        self.partial += piece

    def parse(self, line: bytes, messages: list[dict]) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict):
            messages.append(message)
        elif line.strip():
            self.refused += 1

    def take_refused(self) -> int:
        refused, self.refused = self.refused, 0
        return refused
