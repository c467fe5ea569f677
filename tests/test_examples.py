"""The examples run a few steps and their loss falls."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import shrew

EXAMPLES = Path(__file__).parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))  # the examples import each other by name, as scripts do

import checkpointed_transformer  # noqa: E402
import export_c  # noqa: E402
import train_cnn  # noqa: E402
import train_mlp  # noqa: E402

DEVICES = ["cpu"] + (["opencl"] if "opencl" in " ".join(shrew.devices()) else [])


@pytest.mark.parametrize("device", DEVICES)
def test_mlp_loss_falls(device):
    shrew.manual_seed(0)
    model = train_mlp.build_model().to(device)
    losses = train_mlp.train(model, train_mlp.load_data(), device, epochs=3, progress=False)
    assert losses[-1] < 0.5 * losses[0]


def test_cnn_learns_in_two_epochs(capsys):
    result = train_cnn.main(["--epochs", "2"])
    assert result["losses"][-1] < 0.5 * result["losses"][0]
    assert result["accuracy"] > 0.8
    assert "test accuracy:" in capsys.readouterr().out


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
def test_export_c_trains_in_c_and_reads_back(tmp_path, capsys):
    result = export_c.main(["--epochs", "3", "--out", str(tmp_path)])
    assert result["losses"][-1] < 0.5 * result["losses"][0]
    assert result["accuracy"] > 0.8
    assert "test accuracy reached in C:" in capsys.readouterr().out


def test_checkpointed_transformer_learns_and_reports(tmp_path, capsys):
    plot = tmp_path / "loss.png"
    result = checkpointed_transformer.main(
        ["--steps", "40", "--layers", "2", "--dim", "32", "--batch-size", "32",
         "--length", "3", "--plot", str(plot)])
    losses = result["losses"]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    assert result["peak_checkpointed"] < result["peak_plain"]
    out = capsys.readouterr().out
    assert "peak memory of one training step" in out and "exact-sequence accuracy" in out
    assert plot.read_bytes().startswith(b"\x89PNG")


def test_checkpointed_transformer_learns_under_bf16_autocast(tmp_path, capsys):
    result = checkpointed_transformer.main(
        ["--steps", "40", "--layers", "2", "--dim", "32", "--batch-size", "32",
         "--length", "3", "--amp", "bf16", "--plot", str(tmp_path / "loss.png")])
    losses = result["losses"]
    assert np.mean(losses[-5:]) < 0.8 * np.mean(losses[:5])
    assert result["peak_amp"] < result["peak_plain"]
    assert "under bf16 autocast" in capsys.readouterr().out


def test_mlp_runs_from_the_command_line():
    done = subprocess.run([sys.executable, str(EXAMPLES / "train_mlp.py"), "--epochs", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "test accuracy:" in done.stdout
