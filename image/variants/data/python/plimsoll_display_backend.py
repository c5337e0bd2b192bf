"""The matplotlib backend of plimsoll's displays (plimsoll_display.py): Agg, whose show()
saves the open figures as PNG displays instead of opening a window, and which saves the figures
still open when the interpreter exits."""

import atexit

from matplotlib.backend_bases import FigureManagerBase
from matplotlib.backends.backend_agg import FigureCanvasAgg

import plimsoll_display

FigureCanvas = FigureCanvasAgg
FigureManager = FigureManagerBase


def show(*args, **kwargs):
    plimsoll_display.show_figures()


# matplotlib imports a backend when the first figure is made, after pyplot registered its own
# exit hook (Gcf.destroy_all); exit hooks run last-registered first, so this one sees the
# figures before they are destroyed.
atexit.register(plimsoll_display.show_figures)
