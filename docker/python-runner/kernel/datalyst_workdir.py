"""The working directory: the paths a request may name, reading and writing
files without following links, and snapshots that show what a cell changed.
"""

from __future__ import annotations

import os
import stat

MAX_SNAPSHOT_ENTRIES = 20_000
SKIPPED_DIR_NAMES = frozenset({'__pycache__', '.ipynb_checkpoints'})


class PathRefused(Exception):
    pass


def check_relative_path(path: object) -> list[str]:
    """Splits a workspace-relative path; refuses absolute paths, `..`, NUL and empty parts."""
    if not isinstance(path, str) or path == '' or len(path) > 4096:
        raise PathRefused('path must be a non-empty string')
    if '\0' in path:
        raise PathRefused('path contains NUL')
    if path.startswith('/') or '\\' in path:
        raise PathRefused('path must be relative and use /')
    parts = path.split('/')
    for part in parts:
        if part in ('', '.', '..'):
            raise PathRefused('path has an empty, . or .. component')
    return parts


def open_subdir(parent_fd: int, name: str) -> int:
    """Opens a directory entry that is itself a directory, never a link to one.

    O_NOFOLLOW alone is not enough everywhere: gVisor (runsc 2022-12) follows a
    symlink to a directory when O_DIRECTORY is set. So the entry must be a
    directory by lstat, and the directory opened must be that same inode (a
    swap between the two calls is refused too).
    """
    before = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    if not stat.S_ISDIR(before.st_mode):
        raise PathRefused('a path component is not a directory')
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise PathRefused('a path component changed while it was opened')
    return fd


def open_parent_dir(root_fd: int, parts: list[str], create: bool) -> int:
    """Walks to the parent directory of `parts` without following any symlink."""
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            try:
                next_fd = open_subdir(fd, part)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o755, dir_fd=fd)
                next_fd = open_subdir(fd, part)
            os.close(fd)
            fd = next_fd
        return fd
    except BaseException:
        os.close(fd)
        raise


# Snapshots: which files a cell created or modified.


def snapshot(root: str) -> dict[str, tuple[int, int]]:
    entries: dict[str, tuple[int, int]] = {}
    stack = ['']
    seen = 0
    while stack:
        relative = stack.pop()
        directory = os.path.join(root, relative) if relative else root
        try:
            iterator = os.scandir(directory)
        except OSError:
            continue
        with iterator:
            for entry in iterator:
                seen += 1
                if seen > MAX_SNAPSHOT_ENTRIES:
                    return entries
                path = relative + '/' + entry.name if relative else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIR_NAMES:
                            stack.append(path)
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        entries[path] = (info.st_size, info.st_mtime_ns)
                except OSError:
                    continue
    return entries


def diff_snapshots(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]) -> list[dict]:
    changes = []
    for path in sorted(after):
        size, mtime = after[path]
        previous = before.get(path)
        if previous is None:
            changes.append({'path': path, 'change': 'created', 'sizeBytes': size})
        elif previous != (size, mtime):
            changes.append({'path': path, 'change': 'modified', 'sizeBytes': size})
    return changes


def write_regular_file(workdir: str, parts: list[str], data: bytes, append: bool) -> tuple[int, int]:
    """Creates, truncates or appends to a regular file; returns its size and mtime."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if append else os.O_TRUNC)
    root_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        parent_fd = open_parent_dir(root_fd, parts, create=True)
        try:
            fd = os.open(parts[-1], flags, 0o644, dir_fd=parent_fd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise PathRefused('not a regular file')
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                info = os.fstat(fd)
            finally:
                os.close(fd)
        finally:
            os.close(parent_fd)
    finally:
        os.close(root_fd)
    return info.st_size, info.st_mtime_ns


def read_regular_file(root_fd: int, parts: list[str], max_bytes: int) -> bytes:
    parent_fd = open_parent_dir(root_fd, parts, create=False)
    try:
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent_fd)
    finally:
        os.close(parent_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PathRefused('not a regular file')
        if info.st_size > max_bytes:
            raise PathRefused('byte limit reached')
        chunks = []
        remaining = max_bytes
        while True:
            chunk = os.read(fd, min(1 << 20, remaining + 1))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            if remaining < 0:
                raise PathRefused('byte limit reached')
        return b''.join(chunks)
    finally:
        os.close(fd)
