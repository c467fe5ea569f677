"""The README's set-up commands are what CI runs, and its examples run as written."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _bash_blocks():
    return re.findall(r"```bash\n(.*?)```", README, re.S)


def test_readme_opens_with_the_two_setup_commands():
    main_job, tests = (b.strip() for b in _bash_blocks()[:2])
    assert "pip install" in main_job and "examples/checkpointed_transformer.py" in main_job
    assert "pip install" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command_exactly():
    test_command = _bash_blocks()[1].strip()
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_first_program_runs():
    block = re.search(r"## A first program\n\n```python\n(.*?)```", README, re.S).group(1)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    assert abs(scope["loss"].item()) < 1e-6


def test_training_snippet_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = re.search(r"## Training with nn and optim\n\n```python\n(.*?)```", README,
                      re.S).group(1)
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "model.safetensors").exists()


def test_interop_snippet_runs():
    torch = pytest.importorskip("torch")
    block = re.search(r"## Working with numpy and PyTorch\n\n```python\n(.*?)```", README,
                      re.S).group(1)
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)
    assert torch.equal(scope["y"], torch.tensor([[3.0, 3.0], [12.0, 12.0]]))


def test_anomaly_snippet_raises_as_shown():
    import shrew
    block = re.search(r"## Finding where a NaN came from\n\n```python\n(.*?)```", README,
                      re.S).group(1)
    with pytest.raises(shrew.ShrewError, match=r"Unary.sqrt produced NaN or inf"):
        exec(compile(block, "README.md", "exec"), {})
