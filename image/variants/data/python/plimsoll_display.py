"""Rich outputs from Python inside a plimsoll sandbox (docs/guest-images.md, "Displays").

Imported at every interpreter start by plimsoll_display.pth. It does nothing unless the agent
named a displays directory in PLIMSOLL_DISPLAYS (src/guest/displays.h); then:

- matplotlib draws with Agg through plimsoll_display_backend, whose show() saves every open
  figure as a PNG display and closes it (unless the code chose its own MPLBACKEND);
- figures still open when the interpreter exits are saved the same way (the backend registers
  that hook);
- display(obj, ...) is a builtin: a matplotlib figure becomes a PNG, an object with
  _repr_png_, _repr_svg_, _repr_html_ or _repr_markdown_ gives that representation, and every
  object also gives text/plain (its repr), as in Jupyter;
- a session's interpreter (python_repl.py) calls show_figures() after each cell.

Each display is one file: its MIME type, a newline, its bytes, written under a dot-name and
renamed into place; past 16 in one process, an empty file named "truncated" says some were
dropped. The agent reads them after the run and applies the caps (16 displays, 4 MiB) itself.
"""

import os
import sys

_DIRECTORY = os.environ.get("PLIMSOLL_DISPLAYS", "")
# The agent keeps at most 16; past them a file named "truncated" tells it that some were dropped.
_MOST = 16
_written = 0


def _write(mime, data):
    global _written
    if not _DIRECTORY:
        return False
    if _written >= _MOST:
        try:
            open(os.path.join(_DIRECTORY, "truncated"), "wb").close()
        except OSError:
            pass
        return False
    _written += 1
    import time

    name = "%020d-%07d-%02d" % (time.time_ns(), os.getpid(), _written)
    partial = os.path.join(_DIRECTORY, "." + name)
    try:
        with open(partial, "wb") as out:
            out.write(mime.encode("ascii") + b"\n" + data)
        os.rename(partial, os.path.join(_DIRECTORY, name))
    except OSError:
        return False
    return True


def _figure_png(figure):
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def show_figures():
    """Saves every open matplotlib figure as a PNG display, then closes them."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        _write("image/png", _figure_png(pyplot.figure(number)))
    pyplot.close("all")


_REPRESENTATIONS = (
    ("_repr_png_", "image/png"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
)


def display(*objects):
    """Shows each object: its rich representations, then its repr as text/plain."""
    for value in objects:
        figure_module = sys.modules.get("matplotlib.figure")
        if figure_module is not None and isinstance(value, figure_module.Figure):
            _write("image/png", _figure_png(value))
            continue
        for method, mime in _REPRESENTATIONS:
            represent = getattr(value, method, None)
            if not callable(represent):
                continue
            try:
                shown = represent()
            except Exception:  # a broken _repr_ is the object's problem, not the run's
                continue
            if isinstance(shown, str):
                shown = shown.encode("utf-8", "replace")
            if isinstance(shown, (bytes, bytearray)) and shown:
                _write(mime, bytes(shown))
        _write("text/plain", repr(value).encode("utf-8", "replace"))


if _DIRECTORY:
    import builtins

    # The backend registers the exit hook when matplotlib loads it: after pyplot registered
    # its own (which destroys every figure), so ours runs first.
    os.environ.setdefault("MPLBACKEND", "module://plimsoll_display_backend")
    if not hasattr(builtins, "display"):
        builtins.display = display
