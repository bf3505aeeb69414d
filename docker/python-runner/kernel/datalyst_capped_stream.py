"""A cell's stdout or stderr as the supervisor keeps it: the first bytes up to a cap, and the total."""

from __future__ import annotations

import codecs


class CappedStream:
    """Keeps at most `max_bytes`; counts everything, so that a flood is seen as one."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.kept = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.max_bytes - len(self.kept)
        if room > 0:
            self.kept += data[:room]

    @property
    def over_limit(self) -> bool:
        return self.total > self.max_bytes

    def to_json(self) -> dict:
        # An incremental decoder drops a multi-byte character cut in half by the cap.
        decoder = codecs.getincrementaldecoder('utf-8')('replace')
        text = decoder.decode(bytes(self.kept), final=not self.over_limit)
        return {'text': text, 'truncated': self.over_limit, 'totalBytes': self.total}
