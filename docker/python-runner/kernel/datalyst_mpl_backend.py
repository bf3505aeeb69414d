"""matplotlib backend of the Datalyst kernel: Agg rendering, and `plt.show()`
hands the open figures to the running cell (like a notebook's inline backend)
instead of warning that Agg cannot show them.

Selected with MPLBACKEND=module://datalyst_mpl_backend (set by the supervisor).
"""

from __future__ import annotations

from typing import Callable

from matplotlib.backends.backend_agg import FigureCanvasAgg

FigureCanvas = FigureCanvasAgg

# Set by the worker: captures and closes every open figure.
on_show: Callable[[], None] | None = None


def show(*args: object, **kwargs: object) -> None:
    if on_show is not None:
        on_show()
