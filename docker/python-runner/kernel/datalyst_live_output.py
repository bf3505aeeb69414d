"""What a running cell prints, sent to the host while it runs.

Coalesced (one frame per stream at most every INTERVAL_MS) and bounded: each
frame holds at most FRAME_BYTES, and a cell sends at most its budget (the
cell's maxOutputBytes, both streams together). Live output is a prefix of what
the supervisor keeps for the result, so it never says more than the result.
"""

from __future__ import annotations

import codecs

from datalyst_capped_stream import CappedStream

INTERVAL_MS = 100.0
FRAME_BYTES = 64 << 10


class LiveOutput:
    def __init__(self, streams: dict[str, CappedStream], budget_bytes: int) -> None:
        self.streams = streams
        self.budget = budget_bytes
        self.offsets = {name: 0 for name in streams}
        self.decoders = {name: codecs.getincrementaldecoder('utf-8')('replace') for name in streams}
        self.last_ms = float('-inf')

    def pending(self) -> bool:
        return self.budget > 0 and any(len(stream.kept) > self.offsets[name] for name, stream in self.streams.items())

    def due_in_ms(self, now_ms: float) -> float | None:
        """Milliseconds until the next frame may go out, or None when there is nothing to send."""
        if not self.pending():
            return None
        return max(0.0, self.last_ms + INTERVAL_MS - now_ms)

    def take(self, now_ms: float, final: bool = False) -> list[tuple[str, str]]:
        """The chunks to send now, as (stream, text): one per stream, or (final) everything left."""
        chunks: list[tuple[str, str]] = []
        if not final and (now_ms < self.last_ms + INTERVAL_MS or not self.pending()):
            return chunks
        self.last_ms = now_ms
        for name, stream in self.streams.items():
            while self.budget > 0:
                start = self.offsets[name]
                size = min(len(stream.kept) - start, FRAME_BYTES, self.budget)
                if size <= 0:
                    break
                self.offsets[name] = start + size
                self.budget -= size
                text = self.decoders[name].decode(bytes(stream.kept[start:start + size]))
                if text:
                    chunks.append((name, text))
                if not final:
                    break
            if final and not stream.over_limit and self.offsets[name] == len(stream.kept):
                # A character cut at the very end is shown as the result shows it.
                tail = self.decoders[name].decode(b'', final=True)
                if tail:
                    chunks.append((name, tail))
        return chunks
