"""Datalyst kernel worker: runs cells like a notebook in one persistent namespace.

Spawned by supervisor.py. Its stdout/stderr are pipes the supervisor reads (so
`print`, warnings and tracebacks land there like in a script); requests and
results travel on a private pair of control pipes as JSON lines.

A cell is parsed with `ast`; when its last statement is an expression, that
expression is evaluated separately and echoed (`value`), as a notebook does.
DataFrames, Altair charts and vega-lite dicts that are displayed become tables
and charts; matplotlib figures are captured at `plt.show()` and after the cell,
then closed.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import ctypes
import inspect
import json
import linecache
import os
import signal
import sys
import traceback
import types

from datalyst_json_lines import write_json_line
from datalyst_outputs import CellOutputs, capped_repr, is_frame_like, is_matplotlib_figure
from datalyst_text import MAX_ERROR_CHARS, MAX_NOTE_CHARS, clip_middle, clip_text

PR_SET_PDEATHSIG = 1
CELL_FILENAME_PREFIX = '<cell-'
KERNEL_FILE = os.path.abspath(__file__)


class InterruptGate:
    """SIGINT interrupts user code only; elsewhere it is remembered and ignored."""

    def __init__(self) -> None:
        self.in_user_code = False

    def handler(self, signum: int, frame: object) -> None:
        if self.in_user_code:
            raise KeyboardInterrupt

    def install(self) -> None:
        signal.signal(signal.SIGINT, self.handler)


class Kernel:
    def __init__(self, control_in: int, control_out: int, workdir: str) -> None:
        self.control_in = os.fdopen(control_in, 'rb', buffering=1 << 16)
        self.control_out = control_out
        self.workdir = workdir
        self.gate = InterruptGate()
        self.cell_number = 0
        self.outputs: CellOutputs | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.original_streams = (sys.stdout, sys.stderr)
        # Private copies of the output pipes: a cell that closes or redirects fd 1
        # or 2 must not silence every later cell of the session.
        self.saved_output_fds = (os.dup(1), os.dup(2))
        # The user's namespace is a real __main__ module, so that pickling classes
        # defined in a cell and `if __name__ == '__main__':` work as in a script.
        module = types.ModuleType('__main__')
        module.__dict__['__builtins__'] = __builtins__
        module.__dict__['display'] = self.display
        sys.modules['__main__'] = module
        self.namespace = module.__dict__

    # -- protocol ------------------------------------------------------------

    def send(self, message: dict) -> None:
        write_json_line(self.control_out, message)

    def serve(self) -> None:
        self.send({'type': 'ready'})
        while True:
            line = self.control_in.readline()
            if not line:
                return
            try:
                request = json.loads(line)
            except ValueError:
                continue
            kind = request.get('type')
            # Echoed with the answer; kept out of the request, which cell code could reach.
            token = request.pop('token', None)
            if kind == 'execute':
                result = self.execute(str(request.get('code', '')))
                self.send({'type': 'done', 'id': request.get('id'), 'token': token, 'result': result})
            elif kind == 'profile':
                self.send(dict(self.profile(request.get('options') or {}), type='done', id=request.get('id'),
                               token=token))

    # -- display -------------------------------------------------------------

    def display(self, *values: object) -> None:
        """Shows values like a notebook: tables, charts and figures are captured, other values printed."""
        for value in values:
            self.show_value(value, echo=True)

    def show_value(self, value: object, echo: bool) -> str | None:
        """Captures a displayable value; returns its text form for the echo (None for charts and figures)."""
        outputs = self.outputs
        if outputs is None:
            print(capped_repr(value))
            return None
        captured = outputs.display(value)
        if captured and not is_frame_like(value):
            close_figure_if_any(value)
            return None
        text = capped_repr(value)
        if echo:
            print(text)
        return text

    def on_show(self) -> None:
        if self.outputs is not None:
            self.outputs.capture_open_figures(close=False)

    # -- cells ---------------------------------------------------------------

    def execute(self, code: str) -> dict:
        self.cell_number += 1
        outputs = CellOutputs(self.cell_number)
        self.outputs = outputs
        filename = '%s%d>' % (CELL_FILENAME_PREFIX, self.cell_number)
        # Tracebacks show the cell's lines, as they do for a script.
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        result: dict = {'status': 'ok', 'error': None, 'value': None}
        try:
            self.run_cell(code, filename, result)
        finally:
            self.gate.in_user_code = False
            self.gate.install()
            try:
                outputs.capture_open_figures(close=True)
            except Exception as error:  # a broken figure must not lose the cell's result
                print('Figures could not be captured: %s: %s' % (type(error).__name__, error), file=sys.stderr)
            self.restore_streams()
            self.outputs = None
        result.update(outputs.to_json())
        return result

    def run_cell(self, code: str, filename: str, result: dict) -> None:
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        try:
            tree = compile(code, filename, 'exec', ast.PyCF_ONLY_AST | flags, dont_inherit=True)
            last_expression = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(';'):
                last_expression = ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, 'exec', flags, dont_inherit=True)
            tail = compile(last_expression, filename, 'eval', flags, dont_inherit=True) if last_expression else None
        except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as error:
            self.report_error(error, result, syntax=True)
            return
        self.gate.install()
        try:
            self.gate.in_user_code = True
            self.run_code(body)
            value = self.run_code(tail) if tail is not None else None
            self.gate.in_user_code = False
        except SystemExit as error:
            self.gate.in_user_code = False
            if error.code not in (None, 0):
                self.report_error(error, result)
            return
        except BaseException as error:  # the user's exception, KeyboardInterrupt included
            self.gate.in_user_code = False
            self.report_error(error, result)
            return
        if value is not None:
            self.namespace['_'] = value
            result['value'] = self.show_value(value, echo=False)

    def run_code(self, code: types.CodeType) -> object:
        value = eval(code, self.namespace)
        if code.co_flags & inspect.CO_COROUTINE:
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
            value = self.loop.run_until_complete(value)
        return value

    def report_error(self, error: BaseException, result: dict, syntax: bool = False) -> None:
        if syntax:
            text = ''.join(traceback.format_exception_only(type(error), error))
        else:
            # Start at the cell's first frame: the kernel's own frames are not the user's business.
            frames = error.__traceback__
            while frames is not None and not frames.tb_frame.f_code.co_filename.startswith(CELL_FILENAME_PREFIX):
                frames = frames.tb_next
            summary = traceback.TracebackException(type(error), error, frames, compact=True)
            # ...and end at the user's last frame: an interrupt is raised by our SIGINT handler.
            while summary.stack and summary.stack[-1].filename == KERNEL_FILE:
                summary.stack.pop()
            text = ''.join(summary.format())
        # The cell controls the message: `raise ValueError('v' * 30_000_000)` must
        # stay an `error` (not flood stderr into `output-limit`) and reach the host small.
        text = clip_middle(text, MAX_ERROR_CHARS)
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except Exception:
            os.write(2, text.encode('utf-8', 'replace'))
        result['status'] = 'error'
        result['error'] = {
            'name': clip_text(type(error).__name__, MAX_NOTE_CHARS),
            'value': clip_text(safe_str(error), MAX_ERROR_CHARS),
            'traceback': text,
        }

    def restore_streams(self) -> None:
        for fd, saved in zip((1, 2), self.saved_output_fds):
            try:
                intact = os.path.samestat(os.fstat(fd), os.fstat(saved))
            except OSError:
                intact = False
            if not intact:
                try:
                    os.dup2(saved, fd)
                except OSError:
                    pass
        for index, name in enumerate(('stdout', 'stderr')):
            stream = getattr(sys, name)
            if stream is not None and not getattr(stream, 'closed', False):
                continue
            original = self.original_streams[index]
            if getattr(original, 'closed', False):
                # The cell closed the original object itself: a new one on the same fd.
                original = open(index + 1, 'w', encoding='utf-8', errors='backslashreplace', buffering=1,
                                closefd=False)
                self.original_streams = tuple(
                    original if position == index else kept for position, kept in enumerate(self.original_streams))
            setattr(sys, name, original)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass

    # -- workspace profile ---------------------------------------------------

    def profile(self, options: dict) -> dict:
        """Profiles the workspace in its own namespace (the user's variables are not touched)."""
        self.gate.install()
        try:
            self.gate.in_user_code = True
            import datalyst_profile

            profile = datalyst_profile.profile_workspace(self.workdir, options)
            self.gate.in_user_code = False
            return {'profile': profile}
        except BaseException as error:
            self.gate.in_user_code = False
            return {'message': clip_text('the profile failed: %s: %s' % (type(error).__name__, safe_str(error)),
                                         MAX_NOTE_CHARS)}


def close_figure_if_any(value: object) -> None:
    if is_matplotlib_figure(value):
        import matplotlib.pyplot as pyplot

        pyplot.close(value)


def safe_str(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:
        return '<unprintable %s>' % type(error).__name__


def prepare_process() -> None:
    # The out-of-memory killer should pick the worker, not the supervisor
    # (raising one's own score needs no privilege).
    try:
        with open('/proc/self/oom_score_adj', 'w', encoding='ascii') as handle:
            handle.write('1000')
    except OSError:
        pass
    # Die with the supervisor.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def warm_up() -> None:
    """Imports the usual stack before the first cell asks for it."""
    try:
        import numpy  # noqa: F401
        import pandas  # noqa: F401
        import matplotlib

        # CJK text renders through matplotlib's per-glyph font fallback, which walks
        # the font.family list: the sans-serif choice (DejaVu Sans) first, then WenQuanYi.
        preferred = ['DejaVu Sans', 'WenQuanYi Micro Hei']
        current = list(matplotlib.rcParams['font.sans-serif'])
        matplotlib.rcParams['font.sans-serif'] = preferred + [name for name in current if name not in preferred]
        matplotlib.rcParams['font.family'] = ['sans-serif', 'WenQuanYi Micro Hei']
        import matplotlib.pyplot  # noqa: F401
        import datalyst_mpl_backend  # noqa: F401
    except Exception as error:  # a missing library is the cell's problem, not the kernel's
        print('datalyst kernel: warm-up import failed: %s' % error, file=sys.__stderr__)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--control-in', type=int, required=True)
    parser.add_argument('--control-out', type=int, required=True)
    parser.add_argument('--workdir', required=True)
    arguments = parser.parse_args()
    prepare_process()
    for fd in (arguments.control_in, arguments.control_out):
        os.set_inheritable(fd, False)
    os.chdir(arguments.workdir)
    # Like a script in the working directory: its modules import, the kernel's stay last.
    kernel_dir = os.path.dirname(os.path.abspath(__file__))
    sys.path = [arguments.workdir] + [entry for entry in sys.path if entry not in (kernel_dir, '')] + [kernel_dir]
    kernel = Kernel(arguments.control_in, arguments.control_out, arguments.workdir)
    warm_up()
    backend = sys.modules.get('datalyst_mpl_backend')
    if backend is not None:
        backend.on_show = kernel.on_show
    kernel.gate.install()
    kernel.serve()


if __name__ == '__main__':
    main()
