"""A request that runs in the worker, one at a time: a cell or a workspace profile."""

from __future__ import annotations

from datalyst_capped_stream import CappedStream

DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_GRACE_MS = 5_000


class Job:
    """A request that runs in the worker (a cell or a workspace profile)."""

    def __init__(self, request: dict, max_output_bytes: int) -> None:
        self.id = request['id']
        self.kind = request['type']
        self.timeout_ms = float(request.get('timeoutMs') or DEFAULT_TIMEOUT_MS)
        self.grace_ms = float(request.get('interruptGraceMs') or DEFAULT_GRACE_MS)
        self.stdout = CappedStream(max_output_bytes)
        self.stderr = CappedStream(max_output_bytes)
        self.started_ms = 0.0
        self.interrupted_ms: float | None = None
        self.stop_reason: str | None = None  # 'timeout' | 'output-limit' | 'cancelled'
        self.killed = False
        self.oom_before: int | None = None
