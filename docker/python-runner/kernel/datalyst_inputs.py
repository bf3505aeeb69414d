"""Inputs mounted read-only: the workspace's files sit in a read-only folder
outside the working directory (a bind mount, or a volume filled by the host),
and appear in the working directory by their names as symbolic links, so that
cells open them as before and write new files next to them.

Replacing an input is a write to the working directory, never to the input:
a cell that opens an input name for writing (`open(name, 'w')`, `'a'`, `'r+'`,
`df.to_csv(name)`, `os.truncate`, `os.chmod`) first gets the link replaced by a
file of its own in the working directory (emptied, or a copy of the input when
the old content is kept), through an audit hook of the worker. Deleting or
renaming an input name acts on the link. Writes that Python does not see (a C
library opening the path itself, SQLite) reach the read-only mount and fail
with EROFS ("Read-only file system"); SQLite opens an input read-only.

Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys

from datalyst_workdir import PathRefused, check_relative_path, open_parent_dir

INPUTS_ROOT_ENV = 'DATALYST_INPUTS_ROOT'
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_TRUNC | os.O_CREAT


def inputs_root() -> str | None:
    """The read-only inputs folder of this sandbox, or None (the local backend copies instead)."""
    root = os.environ.get(INPUTS_ROOT_ENV)
    return os.path.abspath(root) if root else None


def link_inputs(workdir: str, paths: object) -> int:
    """Links each input by its relative path in the working directory; returns how many.

    Every path must be a readable regular file of the inputs folder: a missing
    one means the mount does not show the host's folder (an engine on another
    machine or in another mount namespace), which the host must hear about."""
    root = inputs_root()
    if root is None:
        raise ValueError('this sandbox has no inputs folder (%s is not set)' % INPUTS_ROOT_ENV)
    if not isinstance(paths, list):
        raise ValueError('paths must be a list')
    root_fd = os.open(workdir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for path in paths:
            parts = check_relative_path(path)
            source = os.path.join(root, *parts)
            try:
                info = os.lstat(source)
            except FileNotFoundError:
                raise PathRefused('%s is not in the inputs folder' % path) from None
            if not stat.S_ISREG(info.st_mode):
                raise PathRefused('%s is not a regular file in the inputs folder' % path)
            if not os.access(source, os.R_OK):
                raise PathRefused('%s cannot be read by the sandbox user' % path)
            parent_fd = open_parent_dir(root_fd, parts, create=True)
            try:
                os.symlink(source, parts[-1], dir_fd=parent_fd)
            finally:
                os.close(parent_fd)
    finally:
        os.close(root_fd)
    return len(paths)


def input_of(path: str, root: str) -> str | None:
    """The input a working-directory path links to, or None when it is no input link."""
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return None
        target = os.readlink(path)
    except (OSError, ValueError):
        return None
    return target if target.startswith(root + os.sep) else None


def replace_link(path: str, target: str, keep_content: bool) -> None:
    """Puts a file of the working directory in place of an input link."""
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, '.%s.datalyst-%d' % (name, os.getpid()))
    if keep_content:
        shutil.copyfile(target, temporary)
    else:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    try:
        os.replace(temporary, path)
    except OSError:
        os.unlink(temporary)
        raise


def install_write_hook(workdir: str) -> bool:
    """Makes writes to an input name write a file of the working directory instead (see above)."""
    root = inputs_root()
    if root is None:
        return False
    workdir = os.path.abspath(workdir)
    prefix = workdir + os.sep

    def local_path(candidate: object) -> str | None:
        if isinstance(candidate, int) or candidate is None:
            return None
        try:
            text = os.fsdecode(os.fspath(candidate))
        except TypeError:
            return None
        absolute = os.path.abspath(text)
        return absolute if absolute.startswith(prefix) else None

    def on_event(event: str, args: tuple) -> None:
        try:
            if event == 'open':
                flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
                mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ''
                writes = bool(flags & WRITE_FLAGS) or any(letter in mode for letter in 'wax+')
                if not writes:
                    return
                keep = not ('w' in mode or flags & os.O_TRUNC)
            elif event == 'os.truncate' or event == 'os.chmod':
                keep = True
            else:
                return
            path = local_path(args[0])
            if path is None:
                return
            target = input_of(path, root)
            if target is not None:
                replace_link(path, target, keep_content=keep)
        except Exception:
            # The hook only helps; the call itself then says what went wrong (EROFS).
            pass

    sys.addaudithook(on_event)
    return True


def profile_with_inputs(profile_workspace, workdir: str, options: dict) -> dict:
    """The workspace profile of the working directory, with the inputs its links name.

    The profile lists regular files only (never a link); the inputs are profiled
    in their own folder under the same relative paths, which the loadCode of
    each table uses, and only those still linked by their own name."""
    own = profile_workspace(workdir, options)
    root = inputs_root()
    if root is None or not os.path.isdir(root):
        return own
    inputs = profile_workspace(root, options)
    if 'part' in own and 'part' in inputs:
        # A part is dealt from both listings: the host merges parts only when every kernel saw the same two.
        both = hashlib.sha256((own['part']['listing'] + inputs['part']['listing']).encode('ascii')).hexdigest()
        own = dict(own, part=dict(own['part'], listing=both))
    linked = [entry for entry in inputs['files']
              if input_of(os.path.join(workdir, entry['path']), root) == os.path.join(root, entry['path'])]
    if not linked:
        return own
    files = sorted(linked + own['files'], key=lambda entry: entry['path'])
    return dict(own, files=files, truncated=bool(own.get('truncated') or inputs.get('truncated')),
                totalFiles=int(own.get('totalFiles') or 0) + int(inputs.get('totalFiles') or 0))
