"""Tests for plimsoll_display.py outside the image (no matplotlib needed): the files it writes
are the ones the agent reads (src/guest/displays.h), and it does nothing without a directory.

Run: python3 image/variants/data/python/plimsoll_display_test.py
"""

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def run(code: str, directory: str | None) -> subprocess.CompletedProcess[str]:
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(HERE)}
    if directory is not None:
        environment["PLIMSOLL_DISPLAYS"] = directory
    # -S: not the host's site-packages; the import is the .pth's line, done by hand.
    return subprocess.run([sys.executable, "-S", "-c", "import plimsoll_display\n" + code],
                          env=environment, capture_output=True, text=True, timeout=60)


def displays(directory: str) -> list[tuple[str, bytes]]:
    shown = []
    for name in sorted(os.listdir(directory)):
        header, _, data = Path(directory, name).read_bytes().partition(b"\n")
        shown.append((header.decode("ascii"), data))
    return shown


class DisplayTest(unittest.TestCase):
    def setUp(self) -> None:
        work = tempfile.TemporaryDirectory()
        self.addCleanup(work.cleanup)
        self.directory = work.name

    def test_rich_representations_then_plain_text_in_order(self) -> None:
        done = run("class Table:\n"
                   "    def _repr_html_(self): return '<table><td>1</td></table>'\n"
                   "    def _repr_markdown_(self): return ''\n"  # empty: not shown
                   "    def __repr__(self): return 'Table(1)'\n"
                   "class Broken:\n"
                   "    def _repr_html_(self): raise ValueError('no')\n"
                   "    def __repr__(self): return 'Broken()'\n"
                   "display(Table(), 'text')\n"
                   "display(Broken())\n", self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(displays(self.directory), [
            ("text/html", b"<table><td>1</td></table>"),
            ("text/plain", b"Table(1)"),
            ("text/plain", b"'text'"),
            ("text/plain", b"Broken()"),
        ])

    def test_past_the_cap_a_marker_says_some_were_dropped(self) -> None:
        done = run("for n in range(40): display(n)\n", self.directory)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.directory, "truncated")))
        os.remove(os.path.join(self.directory, "truncated"))
        shown = displays(self.directory)
        self.assertEqual([data for _, data in shown], [str(n).encode() for n in range(16)])

    def test_nothing_without_a_directory(self) -> None:
        done = run("import builtins, os\n"
                   "print(hasattr(builtins, 'display'), 'MPLBACKEND' in os.environ)\n", None)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "False False\n")

    def test_the_backend_is_chosen_unless_the_code_chose_one(self) -> None:
        done = run("import os\nprint(os.environ['MPLBACKEND'])\n", self.directory)
        self.assertEqual(done.stdout, "module://plimsoll_display_backend\n", done.stderr)

    def test_an_unwritable_directory_costs_the_displays_not_the_run(self) -> None:
        done = run("display(1)\nprint('ran')\n", os.path.join(self.directory, "missing"))
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, "ran\n")


if __name__ == "__main__":
    unittest.main()
