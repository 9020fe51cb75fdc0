"""pyproject.toml declares the licence the current way (PEP 639), so building the wheel warns about nothing.

setuptools deprecated the table form `license = { text = "MIT" }` (a `BuildBackendWarning`: builds with it
break from 2027-02-18); the SPDX string and `license-files` need setuptools >= 77. Measured: `python -m pip
wheel . --no-deps` with setuptools 84.2.1 printed that warning three times before, none after, and the wheel's
METADATA has `License-Expression: MIT` and `License-File: LICENSE`.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text()


def test_license_is_an_spdx_expression_with_its_file():
    text = _pyproject()
    assert re.search(r'^license = "MIT"$', text, re.MULTILINE), "license must be the SPDX string, not a table"
    files = re.search(r"^license-files = \[(.*)\]$", text, re.MULTILINE)
    assert files, "license-files is missing"
    for name in re.findall(r'"([^"]+)"', files.group(1)):
        assert (ROOT / name).is_file(), f"license-files names {name}, which does not exist"
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert not re.search(r"License ::", text), "a License classifier beside an SPDX license is an error"


def test_build_requires_a_setuptools_that_reads_it():
    requires = re.search(r"^\[build-system\]\n(?:#.*\n)*requires = \[(.*)\]$", _pyproject(), re.MULTILINE)
    assert requires, "no [build-system] requires"
    version = re.search(r'"setuptools>=(\d+)', requires.group(1))
    assert version and int(version.group(1)) >= 77, requires.group(1)
