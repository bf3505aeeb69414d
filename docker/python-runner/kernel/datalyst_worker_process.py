"""The worker process (worker.py) as the supervisor sees it: its pipes, its state, how it ended."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys

from datalyst_control_lines import ControlLines
from datalyst_json_lines import write_json_line

KERNEL_DIR = os.path.dirname(os.path.abspath(__file__))


def set_nonblocking(fd: int) -> None:
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)


def prefer_to_be_oom_killed() -> None:
    """Runs in the child before exec: the out-of-memory killer must pick a worker (even one
    still starting, before worker.py raises its own score), never the supervisor, PID 1,
    whose death ends the session. Raising one's own score needs no privilege."""
    try:
        fd = os.open('/proc/self/oom_score_adj', os.O_WRONLY)
        try:
            os.write(fd, b'1000')
        finally:
            os.close(fd)
    except OSError:
        pass


class Worker:
    """One worker process: its pipes, its state, and how it ended."""

    def __init__(self, workdir: str, env: dict[str, str]) -> None:
        to_worker_read, self.to_worker = os.pipe()
        self.from_worker, from_worker_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, '-u', os.path.join(KERNEL_DIR, 'worker.py'),
             '--control-in', str(to_worker_read), '--control-out', str(from_worker_write),
             '--workdir', workdir],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(to_worker_read, from_worker_write),
            start_new_session=True,  # own process group: one killpg reaches its children
            preexec_fn=prefer_to_be_oom_killed,
            cwd=workdir,
            env=env,
        )
        os.close(to_worker_read)
        os.close(from_worker_write)
        self.pid = self.process.pid
        assert self.process.stdout is not None and self.process.stderr is not None
        self.stdout_fd = self.process.stdout.fileno()
        self.stderr_fd = self.process.stderr.fileno()
        for fd in (self.from_worker, self.stdout_fd, self.stderr_fd):
            set_nonblocking(fd)
        self.ready = False
        self.exited = False
        self.exit_status: int | None = None
        self.control = ControlLines()

    def send(self, message: dict) -> None:
        write_json_line(self.to_worker, message)

    def interrupt(self) -> None:
        if not self.exited:
            try:
                os.kill(self.pid, signal.SIGINT)
            except ProcessLookupError:
                pass

    def kill_group(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close_fds(self) -> None:
        for fd in (self.to_worker, self.from_worker):
            try:
                os.close(fd)
            except OSError:
                pass
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
