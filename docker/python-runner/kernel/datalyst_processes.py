"""Processes of a sandbox: becoming the subreaper of the worker's tree, finding
children through /proc, and the memory cgroup's out-of-memory counter. All of
it is optional: where it is not available it answers "unknown".
"""

from __future__ import annotations

import ctypes
import os

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphans of the worker's tree are re-parented to us, so we can find and kill them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_undumpable() -> bool:
    """Closes /proc/<supervisor>/fd and /environ to the worker, which runs as the same
    uid: without this, cell code could write forged protocol lines to our stdout.
    The worker is exec'd, so it is dumpable again and ptrace-free of us."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def oom_kill_count() -> int | None:
    """The memory cgroup's oom_kill counter (v1 or v2), or None where it cannot be read."""
    candidates = (
        ('/sys/fs/cgroup/memory/memory.oom_control', 'oom_kill'),
        ('/sys/fs/cgroup/memory.events', 'oom_kill'),
    )
    for path, key in candidates:
        try:
            with open(path, encoding='ascii') as handle:
                for line in handle:
                    name, _, value = line.partition(' ')
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return None


def memory_headroom_bytes() -> int | None:
    """Bytes the memory cgroup can still give before its limit (reclaimable file cache
    counted as free), or None where there is no limit to read."""
    candidates = (
        ('/sys/fs/cgroup/memory/memory.limit_in_bytes', '/sys/fs/cgroup/memory/memory.usage_in_bytes',
         '/sys/fs/cgroup/memory/memory.stat', 'total_inactive_file'),
        ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory.current', '/sys/fs/cgroup/memory.stat', 'inactive_file'),
    )
    for limit_path, usage_path, stat_path, inactive_key in candidates:
        try:
            with open(limit_path, encoding='ascii') as handle:
                limit_text = handle.read().strip()
            if limit_text == 'max':
                return None
            with open(usage_path, encoding='ascii') as handle:
                usage = int(handle.read())
            inactive = 0
            with open(stat_path, encoding='ascii') as handle:
                for line in handle:
                    name, _, value = line.partition(' ')
                    if name == inactive_key:
                        inactive = int(value)
            limit = int(limit_text)
            if limit >= 1 << 60:  # cgroup v1 without a limit
                return None
            return limit - max(0, usage - inactive)
        except (OSError, ValueError):
            continue
    return None


def read_children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        tasks = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return children
    for task in tasks:
        try:
            with open('/proc/%d/task/%s/children' % (pid, task), encoding='ascii') as handle:
                children.extend(int(item) for item in handle.read().split())
        except (OSError, ValueError):
            continue
    return children


def is_present(pid: int) -> bool:
    """True while the process exists, zombie or not."""
    return os.path.exists('/proc/%d' % pid)


def is_running(pid: int) -> bool:
    """True while the process exists and is not a zombie (a zombie only waits for its parent)."""
    try:
        with open('/proc/%d/stat' % pid, encoding='ascii', errors='replace') as handle:
            stat = handle.read()
    except OSError:
        return False
    # The state follows the command name, which may itself hold ') '.
    return stat[stat.rfind(')') + 2:stat.rfind(')') + 3] not in ('Z', 'X', '')
