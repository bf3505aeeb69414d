"""Rich outputs of a cell: matplotlib figures, vega-lite charts and DataFrame tables.

Everything returned here is plain JSON (the host validates it with zod), capped
so that one cell cannot produce a message of unbounded size.
"""

from __future__ import annotations

import base64
import io
import json
import math
import sys

from datalyst_text import MAX_VALUE_CHARS, clip_text, short_text

MAX_FIGURES_PER_CELL = 20
MAX_FIGURE_BYTES = 8 << 20
MAX_FIGURE_BYTES_PER_CELL = 32 << 20
MAX_CHARTS_PER_CELL = 20
MAX_CHART_SPEC_BYTES = 4 << 20
MAX_TABLES_PER_CELL = 20
MAX_TABLE_ROWS = 50
MAX_TABLE_COLUMNS = 30


class CellOutputs:
    """Collects what one cell displayed, in order."""

    def __init__(self, cell_number: int) -> None:
        self.cell_number = cell_number
        self.figures: list[dict] = []
        self.charts: list[dict] = []
        self.tables: list[dict] = []
        self.figure_bytes = 0
        self.captured_figures: dict[int, tuple[object, bytes]] = {}

    def to_json(self) -> dict:
        return {'figures': self.figures, 'charts': self.charts, 'tables': self.tables}

    # -- dispatch ------------------------------------------------------------

    def display(self, value: object) -> bool:
        """Captures a displayable object; False when it is not one (the caller prints its repr)."""
        if is_vega_lite_dict(value):
            self.add_chart(value)  # type: ignore[arg-type]
            return True
        if is_altair_chart(value):
            try:
                spec = value.to_dict()  # type: ignore[attr-defined]
            except Exception as error:  # an invalid chart is the user's error: say so, keep going
                print('Altair chart could not be converted: %s: %s' % (type(error).__name__, error), file=sys.stderr)
                return True
            self.add_chart(spec)
            return True
        if is_frame_like(value):
            self.add_table(value)
            return True
        if is_matplotlib_figure(value):
            self.add_figure(value)
            return True
        return False

    # -- charts --------------------------------------------------------------

    def add_chart(self, spec: dict) -> None:
        if len(self.charts) >= MAX_CHARTS_PER_CELL:
            return
        try:
            text = json.dumps(spec, default=str, allow_nan=False)
        except (TypeError, ValueError):
            text = json.dumps(json_safe(spec), default=str)
        if len(text) > MAX_CHART_SPEC_BYTES:
            print('A chart spec larger than %d bytes was not captured.' % MAX_CHART_SPEC_BYTES, file=sys.stderr)
            return
        self.charts.append({'id': 'chart-%d-%d' % (self.cell_number, len(self.charts) + 1), 'spec': json.loads(text)})

    # -- tables --------------------------------------------------------------

    def add_table(self, frame: object) -> None:
        if len(self.tables) >= MAX_TABLES_PER_CELL:
            return
        import pandas as pd

        if isinstance(frame, pd.Series):
            frame = frame.to_frame(name=frame.name if frame.name is not None else 0)
        assert isinstance(frame, pd.DataFrame)
        total_rows, total_columns = frame.shape
        head = frame.iloc[:MAX_TABLE_ROWS, :MAX_TABLE_COLUMNS]
        rows = [[table_cell(value) for value in row] for row in head.itertuples(index=False, name=None)]
        self.tables.append({
            'id': 'table-%d-%d' % (self.cell_number, len(self.tables) + 1),
            'columns': [label_text(column) for column in head.columns],
            'index': [label_text(label) for label in head.index],
            'rows': rows,
            'totalRows': int(total_rows),
            'totalColumns': int(total_columns),
            'truncated': bool(total_rows > MAX_TABLE_ROWS or total_columns > MAX_TABLE_COLUMNS),
        })

    # -- figures -------------------------------------------------------------

    def capture_open_figures(self, close: bool) -> None:
        """Captures the open pyplot figures not captured yet (or changed since), then closes them if asked.

        `plt.show()` captures without closing, as in a script (DeepAnalyze's model
        was trained on scripts): code that saves a figure after showing it still
        saves the drawing. The end of the cell captures what is left and closes all.
        """
        helpers = sys.modules.get('matplotlib._pylab_helpers')
        if helpers is None:
            return
        for manager in helpers.Gcf.get_all_fig_managers():
            figure = manager.canvas.figure
            previous = self.captured_figures.get(id(figure))
            # A figure shown earlier is captured again only if it draws differently now
            # (matplotlib's `stale` flag is no help: savefig sets it when it restores colours).
            png = self.add_figure(figure, unless_equal_to=previous[1] if previous else None)
            if png is not None:
                # Keep the figure referenced: the id of a collected figure could be reused.
                self.captured_figures[id(figure)] = (figure, png)
        if close:
            sys.modules['matplotlib.pyplot'].close('all')
            self.captured_figures.clear()

    def add_figure(self, figure: object, unless_equal_to: bytes | None = None) -> bytes | None:
        """Renders and keeps a figure; returns its PNG (None when not kept)."""
        if len(self.figures) >= MAX_FIGURES_PER_CELL:
            return None
        if not figure.get_axes() and not figure.texts and not figure.images:  # type: ignore[attr-defined]
            return None  # an empty canvas (plt.figure() then a plot that made its own figure)
        buffer = io.BytesIO()
        try:
            figure.savefig(buffer, format='png', bbox_inches='tight')  # type: ignore[attr-defined]
        except Exception as error:
            print('A figure could not be rendered: %s: %s' % (type(error).__name__, error), file=sys.stderr)
            return None
        data = buffer.getvalue()
        if unless_equal_to is not None and data == unless_equal_to:
            return data
        if len(data) > MAX_FIGURE_BYTES:
            print('A figure larger than %d bytes was not captured.' % MAX_FIGURE_BYTES, file=sys.stderr)
            return None
        if self.figure_bytes + len(data) > MAX_FIGURE_BYTES_PER_CELL:
            print('More than %d bytes of figures: the rest was not captured.' % MAX_FIGURE_BYTES_PER_CELL,
                  file=sys.stderr)
            return None
        self.figure_bytes += len(data)
        width, height = png_size(data)
        self.figures.append({
            'id': 'figure-%d-%d' % (self.cell_number, len(self.figures) + 1),
            'mimeType': 'image/png',
            'dataBase64': base64.b64encode(data).decode('ascii'),
            'widthPx': max(1, width),
            'heightPx': max(1, height),
        })
        return data


# ---------------------------------------------------------------------------


def is_vega_lite_dict(value: object) -> bool:
    return isinstance(value, dict) and 'vega-lite' in str(value.get('$schema', ''))


def is_altair_chart(value: object) -> bool:
    altair = sys.modules.get('altair')
    if altair is None:
        return False
    top_level = getattr(altair, 'TopLevelMixin', None)
    if top_level is not None:
        return isinstance(value, top_level)
    return (type(value).__module__ or '').startswith('altair.') and type(value).__name__.endswith('Chart')


def is_frame_like(value: object) -> bool:
    pandas = sys.modules.get('pandas')
    return pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series))


def is_matplotlib_figure(value: object) -> bool:
    figure_module = sys.modules.get('matplotlib.figure')
    return figure_module is not None and isinstance(value, figure_module.Figure)


def png_size(data: bytes) -> tuple[int, int]:
    if len(data) >= 24 and data[:8] == b'\x89PNG\r\n\x1a\n':
        return int.from_bytes(data[16:20], 'big'), int.from_bytes(data[20:24], 'big')
    return 1, 1


def label_text(label: object) -> str:
    """A row or column label as shown in a table (a 5-million-character label is cut too)."""
    if isinstance(label, tuple):
        return short_text(' / '.join(short_text(str(part)) for part in label))
    return short_text(str(label))


def table_cell(value: object) -> object:
    """A JSON value for one table cell: numbers, booleans, null, or text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    numpy = sys.modules.get('numpy')
    if numpy is not None:
        if isinstance(value, numpy.bool_):
            return bool(value)
        if isinstance(value, numpy.integer):
            value = int(value)
        elif isinstance(value, numpy.floating):
            value = float(value)
    if isinstance(value, int):
        return value if abs(value) <= 2 ** 53 else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        return value if math.isfinite(value) else ('inf' if value > 0 else '-inf')
    pandas = sys.modules.get('pandas')
    if pandas is not None:
        try:
            if value is pandas.NaT or value is pandas.NA:
                return None
        except (TypeError, ValueError):
            pass
    return short_text(str(value))


def json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def capped_repr(value: object) -> str:
    return clip_text(repr(value), MAX_VALUE_CHARS)
