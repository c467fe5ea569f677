"""Code quality, enforced by the README's test command: ruff and mypy are clean, and the
API reference (mkdocs + mkdocstrings) builds without a single warning.

The tools and their settings come from pyproject.toml ([tool.ruff], [tool.mypy]) and
mkdocs.yml; the test extra installs them.  Each check runs as a subprocess, so a failure
shows the tool's own report.
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINTED = ("shrew", "tests", "examples", "benchmarks")


def _run(tool: str, *args: str, timeout: float = 120) -> None:
    if importlib.util.find_spec(tool) is None:
        pytest.fail(f"{tool} is not installed: pip install -e '.[test]' (or '.[lint]')")
    proc = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        pytest.fail(f"{tool} {' '.join(args)} failed (exit {proc.returncode}):\n"
                    f"{proc.stdout}{proc.stderr}", pytrace=False)


def test_ruff_is_clean():
    _run("ruff", "check", "--no-cache", *LINTED)


def test_mypy_is_clean(tmp_path):
    _run("mypy", "--cache-dir", str(tmp_path / "mypy_cache"))  # files: pyproject.toml


def test_api_reference_builds_without_warnings(tmp_path):
    # Not --quiet: it hides the very warnings that --strict counts.
    _run("mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site"))


def test_the_package_is_marked_typed():
    assert (ROOT / "shrew" / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text()


def test_the_docs_home_page_shows_the_readme_examples():
    """docs/index.md repeats README examples: they must not drift apart."""
    readme = (ROOT / "README.md").read_text()
    home = (ROOT / "docs" / "index.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", home, re.S)
    assert blocks
    for block in blocks:
        assert block in readme, f"docs/index.md has an example the README lacks:\n{block}"
