"""Datalyst kernel supervisor.

The main process of a sandbox: PID 1 of the container (no docker-init), or a
process spawned by the local backend. It speaks JSON lines with the host over
its own stdin/stdout, every line it writes authenticated (datalyst_host_channel),
and runs the user's cells in a separate WORKER process (worker.py), so that it can:

- capture the worker's stdout/stderr from pipes, with byte caps (a flood stops
  the cell with status `output-limit`);
- enforce the cell timeout: SIGINT first (state kept), SIGKILL of the worker's
  process group after a grace period (worker respawned, state lost);
- tell an out-of-memory kill (cgroup oom_kill counter) from another crash;
- kill processes orphaned by a cell (a double-forked daemon must not outlive it);
- write the workspace files the host sends and read back the files it asks for;
- stream what a running cell prints (coalesced, bounded);
- as PID 1, reap every orphan of the container.

Standard library only. Paths come from argv/env, so the same program runs
outside Docker (the `local` backend); cgroup reading is optional.
"""

from __future__ import annotations

import argparse
import base64
import errno
import hmac
import json
import os
import selectors
import shutil
import signal
import sys
import time
from typing import Callable

from datalyst_host_channel import HelloRefused, HostChannel, read_hello
from datalyst_inputs import link_inputs
from datalyst_job import Job
from datalyst_processes import (become_subreaper, become_undumpable, is_running, memory_headroom_bytes,
                                oom_kill_count, read_children)
from datalyst_text import MAX_ERROR_CHARS, MAX_NOTE_CHARS, MAX_VALUE_CHARS, clip_middle, clip_text
from datalyst_workdir import (PathRefused, check_relative_path, diff_snapshots, read_regular_file, snapshot,
                              write_regular_file)
from datalyst_worker_process import KERNEL_DIR, Worker, set_nonblocking

PROTOCOL_VERSION = 2
READ_CHUNK_BYTES = 1 << 16
CONTROL_READ_BUDGET_BYTES = 256 << 10
DEFAULT_MAX_OUTPUT_BYTES = 1 << 20
DEFAULT_READ_MAX_FILES = 1_000
DEFAULT_READ_MAX_BYTES = 64 << 20
# The worker clips texts and says so ("… (N more characters)"); its note must not be clipped again.
NOTE_ROOM = 1_000


def log(message: str) -> None:
    """Diagnostics go to the supervisor's stderr (the container's stderr), never to the protocol."""
    try:
        os.write(2, ('datalyst-supervisor: ' + message + '\n').encode('utf-8', 'replace'))
    except OSError:
        pass


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


# ---------------------------------------------------------------------------
# The supervisor


class Supervisor:
    def __init__(self, workdir: str, channel: HostChannel, stdin_rest: bytes = b'') -> None:
        self.workdir = workdir
        self.channel = channel
        self.selector = selectors.DefaultSelector()
        self.stdin_buffer = bytearray(stdin_rest)
        self.stdin_scan_from = 0
        self.stdin_closed = False
        self.queue: list[dict] = []
        self.job: Job | None = None
        self.worker: Worker | None = None
        self.failed_starts = 0
        self.state_lost_pending = False
        self.worker_job_ids = 0
        # The result of a cell that killed the worker, held until the new worker is
        # up (or cannot start), so that it says which: (job, result, restart clause).
        self.held_result: tuple[Job, dict, 'RestartClause'] | None = None
        self.baseline = snapshot(workdir)
        self.subreaper = become_subreaper()
        become_undumpable()
        self.worker_env = self.make_worker_env()
        self.wakeup_read, wakeup_write = os.pipe()
        set_nonblocking(self.wakeup_read)
        set_nonblocking(wakeup_write)
        signal.set_wakeup_fd(wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd fires
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on a local terminal goes to the worker
        if os.getpid() != 1:
            # As PID 1 no handler is the defence: the kernel drops every signal sent to a
            # namespace's init from inside it unless init handles that signal.
            ignore_forwarded_signals()
        set_nonblocking(0)
        self.selector.register(0, selectors.EVENT_READ, 'stdin')
        self.selector.register(self.wakeup_read, selectors.EVENT_READ, 'wakeup')

    # -- setup ---------------------------------------------------------------

    def make_worker_env(self) -> dict[str, str]:
        env = dict(os.environ)
        env['PYTHONPATH'] = KERNEL_DIR + (os.pathsep + env['PYTHONPATH'] if env.get('PYTHONPATH') else '')
        env['MPLBACKEND'] = 'module://datalyst_mpl_backend'
        env.setdefault('PYTHONUNBUFFERED', '1')
        env.setdefault('PYTHONDONTWRITEBYTECODE', '1')
        # The image warms matplotlib's font cache into a read-only folder; matplotlib
        # wants a writable one (else it rebuilds the cache and warns on every start).
        seed = env.get('MPLCONFIGDIR')
        if seed and os.path.isdir(seed) and not os.access(seed, os.W_OK):
            writable = os.path.join(env.get('TMPDIR', '/tmp'), 'matplotlib-%d' % os.getuid())
            try:
                shutil.copytree(seed, writable, dirs_exist_ok=True)
                env['MPLCONFIGDIR'] = writable
            except OSError as error:
                log('cannot seed the matplotlib cache: %s' % error)
        return env

    def spawn_worker(self) -> bool:
        """Starts a worker, unless the sandbox's memory is too full for one to start (files
        in its tmpfs stay in memory): the fork could then make the OOM killer pick the
        supervisor, PID 1, and end the session without a word. False when refused."""
        headroom = memory_headroom_bytes()
        if headroom is not None and headroom < MIN_START_HEADROOM_BYTES:
            log('not starting a worker: %d MiB of memory left' % (headroom >> 20))
            self.failed_starts = MAX_FAILED_STARTS
            self.release_held_result(restarted=False, why='%d MiB of memory left: files in the working directory '
                                     'or /tmp hold the rest' % max(0, headroom >> 20))
            self.fail_queue('the Python worker cannot start: the sandbox has %d MiB of memory left (files in the '
                            'working directory or /tmp hold the rest)' % max(0, headroom >> 20))
            return False
        worker = Worker(self.workdir, self.worker_env)
        self.worker = worker
        self.selector.register(worker.from_worker, selectors.EVENT_READ, 'control')
        self.selector.register(worker.stdout_fd, selectors.EVENT_READ, 'stdout')
        self.selector.register(worker.stderr_fd, selectors.EVENT_READ, 'stderr')
        return True

    def retire_worker(self) -> None:
        worker = self.worker
        if worker is None:
            return
        worker.kill_group()
        for fd in (worker.from_worker, worker.stdout_fd, worker.stderr_fd):
            try:
                self.selector.unregister(fd)
            except (KeyError, ValueError):
                pass
        worker.close_fds()
        self.worker = None

    # -- host messages -------------------------------------------------------

    def send(self, message: dict) -> None:
        self.channel.send(message)

    def on_stdin(self) -> None:
        while True:
            try:
                data = os.read(0, 1 << 20)
            except BlockingIOError:
                break
            if not data:
                self.stdin_closed = True
                self.selector.unregister(0)
                break
            self.stdin_buffer += data
        self.on_stdin_lines()

    def on_stdin_lines(self) -> None:
        while True:
            newline = self.stdin_buffer.find(b'\n', self.stdin_scan_from)
            if newline < 0:
                self.stdin_scan_from = len(self.stdin_buffer)
                break
            line = bytes(self.stdin_buffer[:newline])
            del self.stdin_buffer[:newline + 1]
            self.stdin_scan_from = 0
            if line.strip():
                self.on_request_line(line)

    def on_request_line(self, line: bytes) -> None:
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get('type'), str):
                raise ValueError('a request is an object with a type')
        except ValueError as error:
            log('unreadable request: %s' % error)
            return
        request_id = request.get('id')
        kind = request['type']
        try:
            if kind in ('execute', 'profile'):
                self.queue.append(request)
            elif kind == 'write-file':
                self.write_file(request)
                self.send({'type': 'ok', 'id': request_id})
            elif kind == 'read-files':
                self.send(self.read_files(request))
            elif kind == 'link-inputs':  # links, not files: never in a snapshot, never an artifact
                link_inputs(self.workdir, request.get('paths'))
                self.send({'type': 'ok', 'id': request_id})
            elif kind == 'cancel':
                self.cancel(request.get('target'))
                self.send({'type': 'ok', 'id': request_id})
            elif kind == 'ping':
                self.send({'type': 'ok', 'id': request_id})
            elif kind == 'shutdown':
                self.send({'type': 'ok', 'id': request_id})
                self.stdin_closed = True
            else:
                raise ValueError('unknown request type %r' % kind)
        except (PathRefused, OSError, ValueError, TypeError, KeyError) as error:
            message = clip_text('%s: %s' % (type(error).__name__, error), MAX_NOTE_CHARS)
            self.send({'type': 'error', 'id': request_id, 'message': message})

    def cancel(self, target: object) -> None:
        for index, queued in enumerate(self.queue):
            if queued.get('id') == target:
                del self.queue[index]
                self.send({'type': 'error', 'id': target, 'message': 'cancelled before it started'})
                return
        if self.job is not None and self.job.id == target:
            self.stop_job('cancelled')

    # -- files ---------------------------------------------------------------

    def write_file(self, request: dict) -> None:
        parts = check_relative_path(request.get('path'))
        data = base64.b64decode(request.get('dataBase64', ''), validate=True)
        size, mtime_ns = write_regular_file(self.workdir, parts, data, append=bool(request.get('append')))
        # Written by the host, not by a cell: not a change to report.
        self.baseline['/'.join(parts)] = (size, mtime_ns)

    def read_files(self, request: dict) -> dict:
        paths = request.get('paths')
        if not isinstance(paths, list):
            raise ValueError('paths must be a list')
        max_files = int(request.get('maxFiles') or DEFAULT_READ_MAX_FILES)
        max_bytes = int(request.get('maxTotalBytes') or DEFAULT_READ_MAX_BYTES)
        files = []
        skipped = []
        total = 0
        root_fd = os.open(self.workdir, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for path in paths:
                if len(files) >= max_files:
                    skipped.append({'path': str(path), 'reason': 'file count limit'})
                    continue
                try:
                    data = read_regular_file(root_fd, check_relative_path(path), max_bytes - total)
                except PathRefused as error:
                    skipped.append({'path': str(path), 'reason': str(error)})
                    continue
                except OSError as error:
                    reason = 'symbolic link' if error.errno == errno.ELOOP else os.strerror(error.errno or 0)
                    skipped.append({'path': str(path), 'reason': reason})
                    continue
                total += len(data)
                files.append({'path': path, 'dataBase64': base64.b64encode(data).decode('ascii')})
        finally:
            os.close(root_fd)
        return {'type': 'files', 'id': request.get('id'), 'files': files, 'skipped': skipped}

    # -- jobs in the worker --------------------------------------------------

    def maybe_start_job(self) -> None:
        if self.job is not None or not self.queue:
            return
        if self.worker is None:
            self.spawn_worker()
            return
        if not self.worker.ready:
            return
        request = self.queue.pop(0)
        self.worker_job_ids += 1
        job = Job(request, int(request.get('maxOutputBytes') or DEFAULT_MAX_OUTPUT_BYTES), self.worker_job_ids)
        job.oom_before = oom_kill_count()
        job.started_ms = monotonic_ms()
        self.job = job
        message = {'type': job.kind, 'id': job.worker_id, 'token': job.worker_token}
        if job.kind == 'execute':
            message['code'] = request.get('code', '')
        else:
            message['options'] = request.get('options') or {}
        try:
            self.worker.send(message)
        except OSError:
            pass  # the worker died; its exit is noticed by the reaper

    def stop_job(self, reason: str) -> None:
        job = self.job
        if job is None or job.stop_reason is not None or self.worker is None:
            return
        job.stop_reason = reason
        job.interrupted_ms = monotonic_ms()
        self.worker.interrupt()

    def on_worker_output(self, name: str) -> None:
        worker = self.worker
        if worker is None:
            return
        fd = worker.stdout_fd if name == 'stdout' else worker.stderr_fd
        self.drain(fd, name)

    def drain(self, fd: int, name: str) -> None:
        while True:
            try:
                data = os.read(fd, READ_CHUNK_BYTES)
            except BlockingIOError:
                return
            except OSError:
                data = b''
            if not data:
                try:
                    self.selector.unregister(fd)
                except (KeyError, ValueError):
                    pass
                return
            job = self.job
            if job is None:
                continue  # output between cells (a background process) is dropped
            stream = job.stdout if name == 'stdout' else job.stderr
            stream.add(data)
            if stream.over_limit:
                self.stop_job('output-limit')

    def on_control(self) -> None:
        worker = self.worker
        if worker is None:
            return
        # A budget per turn: a cell that keeps the pipe full must not keep the loop
        # from its timers and the host's requests (ControlLines bounds the rest).
        budget = CONTROL_READ_BUDGET_BYTES
        messages: list[dict] = []
        while budget > 0:
            try:
                data = os.read(worker.from_worker, min(READ_CHUNK_BYTES, budget))
            except BlockingIOError:
                break
            if not data:
                try:
                    self.selector.unregister(worker.from_worker)
                except (KeyError, ValueError):
                    pass
                break
            budget -= len(data)
            messages.extend(worker.control.feed(data))
        refused = worker.control.take_refused()
        if refused:
            log('dropped %d unreadable line(s) from the worker' % refused)
        for message in messages:
            if self.worker is not worker:
                return  # the worker was retired while its messages were handled
            if message.get('type') == 'ready':
                worker.ready = True
                self.failed_starts = 0
                self.release_held_result(restarted=True)
            elif message.get('type') == 'done' and self.job is not None and message.get('id') == self.job.worker_id:
                if hmac.compare_digest(str(message.get('token')), self.job.worker_token):
                    self.finish_job(message, state_lost=False)
                else:
                    log('ignored a `done` without the job token (written by cell code, not by the kernel loop)')

    def flush_live(self, final: bool = False) -> None:
        """Sends what the running cell printed since the last frame, when the host asked for it."""
        job = self.job
        if job is None or job.live is None:
            return
        for stream, text in job.live.take(monotonic_ms(), final):
            self.send({'type': 'output', 'id': job.id, 'stream': stream, 'text': text})

    def live_due_s(self) -> float | None:
        job = self.job
        if job is None or job.live is None:
            return None
        due_ms = job.live.due_in_ms(monotonic_ms())
        return None if due_ms is None else due_ms / 1000.0

    def finish_job(self, worker_message: dict | None, state_lost: bool, crash_status: str | None = None,
                   crash_what: str | None = None, restarting: bool = False) -> None:
        """Sends the job's answer. `crash_what` starts the sentence about a dead worker
        ("The kernel ran out of memory"); with `restarting`, a new worker is starting
        and the answer waits until it is up or cannot start, so that it says which."""
        job = self.job
        if job is None:
            return
        worker = self.worker
        if worker is not None and not worker.exited:
            # Output written before the result is already in the pipes: take it now.
            self.drain(worker.stdout_fd, 'stdout')
            self.drain(worker.stderr_fd, 'stderr')
        if job.stop_reason != 'cancelled':
            self.flush_live(final=True)
        self.job = None
        duration_ms = monotonic_ms() - job.started_ms
        # A stopped cell takes its processes with it: the interrupt reaches the worker
        # only, and a fork bomb or a child ignoring signals would run on between cells.
        self.kill_orphans(worker_children=job.stop_reason is not None)
        after = snapshot(self.workdir)
        files = diff_snapshots(self.baseline, after)
        # Nobody reads the result of a cancelled cell: the files it wrote are
        # reported with the next result instead of never.
        if job.stop_reason != 'cancelled':
            self.baseline = after
        if job.kind == 'profile':
            if worker_message is not None and isinstance(worker_message.get('profile'), dict):
                self.send({'type': 'profile', 'id': job.id, 'profile': worker_message['profile']})
            else:
                detail = crash_what or (worker_message or {}).get('message') or 'the profile did not finish'
                detail = clip_text(str(detail), MAX_NOTE_CHARS)
                if job.stop_reason == 'timeout':
                    detail = 'the profile took longer than %d ms' % job.timeout_ms
                self.send({'type': 'error', 'id': job.id, 'message': detail})
            return
        payload = worker_message.get('result') if worker_message is not None else None
        if not isinstance(payload, dict):
            payload = {}
        status = payload.get('status') if payload.get('status') in ('ok', 'error') else 'error'

        def stopped(restarted: bool) -> str:
            if not state_lost:
                return 'interrupted; variables are kept'
            return 'stopped; the kernel was restarted and all variables are lost' if restarted \
                else 'stopped; ' + CANNOT_RESTART

        describe: RestartClause = lambda restarted: None
        if job.stop_reason == 'timeout':
            status = 'timeout'
            describe = lambda restarted: 'The cell ran longer than %s s and was %s.' % (
                format_seconds(job.timeout_ms), stopped(restarted))
        elif job.stop_reason == 'output-limit':
            status = 'output-limit'
            describe = lambda restarted: 'The cell wrote more than %d bytes to %s and was %s.' % (
                job.stdout.max_bytes, 'stdout' if job.stdout.over_limit else 'stderr', stopped(restarted))
        elif job.stop_reason == 'cancelled':
            status = 'error'
            describe = lambda restarted: 'The cell was cancelled.'
        if crash_status is not None and job.stop_reason is None:
            status = crash_status
            what = crash_what or 'The kernel stopped'
            describe = lambda restarted: '%s and %s.' % (
                what, 'was restarted; all variables are lost' if restarted else CANNOT_RESTART)
        if self.state_lost_pending and not state_lost:
            state_lost = True
            before = describe
            describe = lambda restarted: before(restarted) or \
                'The kernel was restarted before this cell; earlier variables are lost.'
        # Nobody reads the result of a cancelled cell: the next result must say the state is gone.
        self.state_lost_pending = job.stop_reason == 'cancelled' and state_lost
        result = {
            'status': status,
            'stdout': job.stdout.to_json(),
            'stderr': job.stderr.to_json(),
            'error': bounded_error(payload.get('error')),
            'value': clip_text(payload['value'], MAX_VALUE_CHARS + NOTE_ROOM) if isinstance(payload.get('value'), str)
            else None,
            'figures': payload.get('figures') or [],
            'charts': payload.get('charts') or [],
            'tables': payload.get('tables') or [],
            'files': files,
            'durationMs': round(duration_ms, 3),
            'stateLost': state_lost,
            'statusDetail': None,
        }
        if restarting:
            self.held_result = (job, result, describe)
            return
        result['statusDetail'] = describe(True)
        self.send({'type': 'result', 'id': job.id, 'result': result})

    def release_held_result(self, restarted: bool, why: str | None = None) -> None:
        if self.held_result is None:
            return
        job, result, describe = self.held_result
        self.held_result = None
        detail = describe(restarted)
        if why and detail:
            detail = '%s (%s)' % (detail[:-1], why) if detail.endswith('.') else '%s (%s)' % (detail, why)
        result['statusDetail'] = clip_text(detail, MAX_NOTE_CHARS) if detail else detail
        self.send({'type': 'result', 'id': job.id, 'result': result})

    # -- processes -----------------------------------------------------------

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            worker = self.worker
            if worker is not None and pid == worker.pid:
                worker.exited = True
                worker.exit_status = status
                worker.process.returncode = os.waitstatus_to_exitcode(status)
                self.on_worker_exit(worker)

    def on_worker_exit(self, worker: Worker) -> None:
        # Take the output it wrote before dying.
        self.drain(worker.stdout_fd, 'stdout')
        self.drain(worker.stderr_fd, 'stderr')
        status = worker.exit_status or 0
        job = self.job
        self.retire_worker()
        if job is None:
            if not worker.ready:
                self.failed_starts += 1
                log('the worker exited while starting (status %d)' % status)
                if self.failed_starts >= MAX_FAILED_STARTS:
                    self.release_held_result(restarted=False, why='the Python worker exited %d times while '
                                             'starting; see the container log' % self.failed_starts)
                    self.fail_queue('the Python worker cannot start; see the container log')
                elif self.held_result is not None:
                    self.spawn_worker()  # the held cell says whether the restart worked
            else:
                # It died between cells (a background thread, a stray signal): the next
                # cell runs in a fresh worker and must say that the state is gone.
                self.state_lost_pending = True
            return
        # The answer waits for the new worker (finish_job holds it), so that it can say
        # whether the kernel came back: a memory-filling cell may leave no room for it.
        if job.killed:
            self.finish_job(None, state_lost=True, restarting=True)
        else:
            killed_by = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
            oom_after = oom_kill_count()
            oom = killed_by == signal.SIGKILL and job.oom_before is not None and oom_after is not None \
                and oom_after > job.oom_before
            if oom:
                self.finish_job(None, state_lost=True, crash_status='memory',
                                crash_what='The kernel ran out of memory', restarting=True)
            else:
                how = 'was killed by signal %d' % killed_by if killed_by else 'exited with code %d' % os.WEXITSTATUS(status)
                if killed_by == signal.SIGKILL and job.oom_before is None:
                    how += ' (possibly out of memory)'
                self.finish_job(None, state_lost=True, crash_status='crashed', crash_what='The kernel %s' % how,
                                restarting=True)
        self.failed_starts = 0
        self.spawn_worker()

    def fail_queue(self, message: str) -> None:
        for request in self.queue:
            self.send({'type': 'error', 'id': request.get('id'), 'message': message})
        self.queue.clear()

    def check_timers(self) -> float | None:
        """Acts on passed deadlines; returns seconds until the next one."""
        job = self.job
        if job is None or self.worker is None:
            return None
        now = monotonic_ms()
        if job.stop_reason is None:
            deadline = job.started_ms + job.timeout_ms
            if now >= deadline:
                self.stop_job('timeout')
            else:
                return (deadline - now) / 1000.0
        if job.interrupted_ms is not None and not job.killed:
            deadline = job.interrupted_ms + job.grace_ms
            if now >= deadline:
                job.killed = True
                self.worker.kill_group()
                return 0.05
            return (deadline - now) / 1000.0
        return 0.05 if job.killed else None

    def kill_orphans(self, worker_children: bool = False) -> None:
        """Kills processes left behind by a cell: children of ours other than the worker
        and, with `worker_children`, the worker's own children and their trees."""
        # Rounds, because processes may fork while we collect them (a fork bomb); the
        # children of a killed process re-parent to us and are found by the next round.
        for _ in range(20):
            worker_pid = self.worker.pid if self.worker is not None and not self.worker.exited else None
            me = os.getpid()
            if self.subreaper:
                roots = [pid for pid in read_children(me) if pid != worker_pid]
            else:
                roots = [pid for pid in read_children(1) if pid not in (me, worker_pid)] if me != 1 else []
            if worker_children and worker_pid is not None:
                roots.extend(read_children(worker_pid))
            roots = [pid for pid in roots if is_running(pid)]
            if not roots:
                return
            victims = []
            stack = list(roots)
            while stack and len(victims) < 10_000:
                pid = stack.pop()
                victims.append(pid)
                stack.extend(read_children(pid))
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            # Wait (briefly) until they are gone and reaped: the victims re-parent to us
            # as their parents die, and a zombie still answers kill(pid, 0). The worker's
            # own dead children stay zombies until it waits for them; they use no CPU.
            deadline = time.monotonic() + 1.0
            while True:
                self.reap()
                if not any(is_running(pid) for pid in victims) or time.monotonic() > deadline:
                    break
                time.sleep(0.002)

    # -- main loop -----------------------------------------------------------

    def run(self) -> None:
        self.spawn_worker()
        self.send({'type': 'ready', 'protocol': PROTOCOL_VERSION, 'pid': os.getpid(), 'workdir': self.workdir,
                   'subreaper': self.subreaper, 'oomCounter': oom_kill_count() is not None})
        self.on_stdin_lines()  # requests that came with the hello
        while not self.stdin_closed:
            self.maybe_start_job()
            timeout = self.check_timers()
            live = self.live_due_s()
            if live is not None:
                timeout = live if timeout is None else min(timeout, live)
            for key, _ in self.selector.select(timeout):
                source = key.data
                if source == 'stdin':
                    self.on_stdin()
                elif source == 'wakeup':
                    try:
                        while os.read(self.wakeup_read, 512):
                            pass
                    except BlockingIOError:
                        pass
                    self.reap()
                elif source == 'control':
                    self.on_control()
                elif source in ('stdout', 'stderr'):
                    self.on_worker_output(source)
            self.reap()
            self.flush_live()
        self.retire_worker()
        self.kill_orphans()
        self.reap_all_children()

    def reap_all_children(self, within_s: float = 1.0) -> None:
        """Waits for the children we killed before we exit: one left a zombie would be
        re-parented to an init that may never wait for it (a CI container's PID 1)."""
        deadline = time.monotonic() + within_s
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.002)


MAX_FAILED_STARTS = 3
# Python with pandas needs far more, but this is what the fork and exec need not to
# push the supervisor over the limit; a worker that then runs out is killed alone.
MIN_START_HEADROOM_BYTES = 48 << 20
CANNOT_RESTART = 'could not be restarted, so this session cannot run more cells'
RestartClause = Callable[[bool], 'str | None']

# Signals the supervisor must survive when it is not PID 1 (the local backend:
# a cell runs as the same user): os.kill(<supervisor>, SIGTERM) from a cell
# would otherwise end the session. The host
# never needs them: it ends a session by closing stdin (or removing the
# container, which is SIGKILL). A Python handler, not SIG_IGN, so that the
# worker (and what it starts) gets the default action back at exec.
FORWARDED_SIGNAL_NAMES = ('SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGALRM', 'SIGVTALRM',
                          'SIGPROF', 'SIGXCPU', 'SIGIO', 'SIGPWR', 'SIGTSTP', 'SIGTTIN', 'SIGTTOU')


def ignore_forwarded_signals() -> None:
    numbers = {getattr(signal, name) for name in FORWARDED_SIGNAL_NAMES if hasattr(signal, name)}
    if hasattr(signal, 'SIGRTMIN'):
        numbers.update(range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
    for number in numbers:
        try:
            signal.signal(number, on_forwarded_signal)
        except (OSError, ValueError):
            pass


def on_forwarded_signal(number: int, _frame: object) -> None:
    log('ignored signal %d' % number)


def bounded_error(error: object) -> dict | None:
    """The worker's error, checked again: the worker runs the cell, so its messages are the cell's."""
    if not isinstance(error, dict):
        return None
    name, value, text = (error.get(key) for key in ('name', 'value', 'traceback'))
    return {
        'name': clip_text(name, MAX_NOTE_CHARS + NOTE_ROOM) if isinstance(name, str) else 'Error',
        'value': clip_text(value, MAX_ERROR_CHARS + NOTE_ROOM) if isinstance(value, str) else '',
        'traceback': clip_middle(text, MAX_ERROR_CHARS + NOTE_ROOM) if isinstance(text, str) else '',
    }


def format_seconds(milliseconds: float) -> str:
    seconds = milliseconds / 1000.0
    return ('%d' % seconds) if seconds == int(seconds) else ('%.1f' % seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description='Datalyst kernel supervisor (JSON lines on stdin/stdout).')
    parser.add_argument('--workdir', default=os.environ.get('DATALYST_WORKDIR') or os.getcwd())
    arguments = parser.parse_args()
    workdir = os.path.abspath(arguments.workdir)
    os.makedirs(workdir, exist_ok=True)
    os.chdir(workdir)
    # Not dumpable before the key exists in this process: cell code runs as our uid.
    become_undumpable()
    try:
        key, stdin_rest = read_hello(0)
    except (HelloRefused, OSError) as error:
        log('no session key from the host: %s' % error)
        sys.exit(2)
    supervisor = Supervisor(workdir, HostChannel(1, key), stdin_rest)
    try:
        supervisor.run()
    except BaseException as error:  # the host must learn why the protocol stopped
        log('stopped: %s: %s' % (type(error).__name__, error))
        supervisor.retire_worker()
        raise


if __name__ == '__main__':
    main()
