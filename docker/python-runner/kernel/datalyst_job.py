"""A request that runs in the worker, one at a time: a cell or a workspace profile."""

from __future__ import annotations

import secrets

from datalyst_capped_stream import CappedStream
from datalyst_live_output import LiveOutput

DEFAULT_TIMEOUT_MS = 120_000
DEFAULT_GRACE_MS = 5_000


class Job:
    """A request that runs in the worker (a cell or a workspace profile)."""

    def __init__(self, request: dict, max_output_bytes: int, worker_id: int) -> None:
        self.id = request['id']
        # The worker (which runs the cell's code) never learns the host's request id.
        self.worker_id = worker_id
        # A `done` must echo it: a thread left behind by an earlier cell cannot end
        # this job by guessing its (sequential) worker id. See the README for the limit.
        self.worker_token = secrets.token_hex(16)
        self.kind = request['type']
        self.timeout_ms = float(request.get('timeoutMs') or DEFAULT_TIMEOUT_MS)
        self.grace_ms = float(request.get('interruptGraceMs') or DEFAULT_GRACE_MS)
        self.stdout = CappedStream(max_output_bytes)
        self.stderr = CappedStream(max_output_bytes)
        # Only cells stream what they print; a profile's output is nobody's business.
        self.live = LiveOutput({'stdout': self.stdout, 'stderr': self.stderr}, max_output_bytes) \
            if self.kind == 'execute' and request.get('liveOutput') else None
        self.started_ms = 0.0
        self.interrupted_ms: float | None = None
        self.stop_reason: str | None = None  # 'timeout' | 'output-limit' | 'cancelled'
        self.killed = False
        self.oom_before: int | None = None
