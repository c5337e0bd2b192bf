"""The README's examples, run as written against the embedded daemon."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import List, Optional, Tuple

import pytest

from conftest import need

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")


def examples() -> List[Tuple[str, Optional[str]]]:
    """Each python block and the text block that follows it (its expected output), if any."""
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S)
    found: List[Tuple[str, Optional[str]]] = []
    for index, (language, body) in enumerate(blocks):
        if language != "python":
            continue
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        expected = following[1] if following and following[0] == "text" else None
        found.append((body, expected))
    return found


EXAMPLES = examples()


def test_readme_has_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example(index: int, tmp_path: object) -> None:
    url = need("PLIMSOLL_TEST_EMBEDDED_URL")
    code, expected = EXAMPLES[index]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONPATH")}
    environment["PLIMSOLL_URL"] = url
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=environment, timeout=60, cwd=str(tmp_path))
    assert ran.returncode == 0, ran.stderr
    if expected is not None:
        assert ran.stdout == expected
