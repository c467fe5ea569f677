"""Smoke tests of the benchmark suite (benchmarks/): every workload builds and steps at a
small scale, and where PyTorch is installed its losses match shrew's.  No timing."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import shrew_steps  # noqa: E402
import workloads  # noqa: E402

SCALE = {"deep_chain_1m": 0.01}  # 10,000 ops; every other workload at 0.05


def _problem(name):
    return workloads.WORKLOADS[name].make(SCALE.get(name, 0.05))


@pytest.mark.parametrize("name", list(workloads.WORKLOADS))
def test_shrew_steps_on_cpu(name):
    step = shrew_steps.build(name, _problem(name))
    losses = [step(), step()]
    assert all(math.isfinite(x) for x in losses)
    if workloads.WORKLOADS[name].training:
        assert losses[1] < losses[0]  # the SGD update took effect


@pytest.mark.parametrize("name", list(workloads.WORKLOADS))
def test_losses_match_torch(name):
    pytest.importorskip("torch")
    import torch_steps
    problem = _problem(name)
    step_s, step_t = shrew_steps.build(name, problem), torch_steps.build(name, problem)
    # The first loss checks the forward pass, the second the gradients through the update.
    assert [step_s(), step_s()] == pytest.approx([step_t(), step_t()], rel=1e-3)


def test_transformer_checkpointed_matches_plain():
    problem = _problem("transformer_step")
    plain = shrew_steps.build("transformer_step", problem)
    checkpointed = shrew_steps.build("transformer_step", problem, checkpoint=True)
    assert [checkpointed(), checkpointed()] == pytest.approx([plain(), plain()], rel=1e-4)


def test_run_writes_results(tmp_path):
    """The whole pipeline (workers, loss check, rounds, table, chart) at a tiny scale."""
    pytest.importorskip("torch")
    pytest.importorskip("matplotlib")
    import run
    status = run.main(["--only", "mlp_step,memory", "--rounds", "1", "--no-opencl",
                       "--scale", "0.05", "--out", str(tmp_path)])
    assert status == 0
    table = (tmp_path / "results.md").read_text()
    assert "| mlp_step |" in table and "shrew, checkpointed blocks" in table
    assert (tmp_path / "results.png").stat().st_size > 0


def test_cuda_lanes_say_why_they_did_not_run(tmp_path):
    """--cuda on a machine whose shrew or PyTorch has no GPU: shrew's lane is a problem
    (exit status 1) with the DeviceError's reason, PyTorch's a note; the CPU lanes run."""
    pytest.importorskip("torch")
    import shrew
    if "cuda" in " ".join(shrew.devices()):
        pytest.skip("this machine has a usable CUDA GPU")
    import run
    status = run.main(["--only", "tiny_chain", "--rounds", "1", "--no-opencl", "--cuda",
                       "--scale", "0.05", "--out", str(tmp_path)])
    assert status == 1
    table = (tmp_path / "results.md").read_text()
    assert "| tiny_chain |" in table and "shrew cuda failed: DeviceError" in table


def test_no_cpu_leaves_the_gpu_lanes_alone(tmp_path):
    """--cuda --no-cpu --compiled: the cuda lanes only (eager, compiled; autocast on the
    autocast workloads), here each failing with its reason, and no cpu lane ran."""
    pytest.importorskip("torch")
    import shrew
    if "cuda" in " ".join(shrew.devices()):
        pytest.skip("this machine has a usable CUDA GPU")
    import run
    status = run.main(["--only", "tiny_chain,mlp_step", "--rounds", "1", "--no-opencl",
                       "--cuda", "--no-cpu", "--compiled", "--scale", "0.05",
                       "--out", str(tmp_path)])
    assert status == 1
    table = (tmp_path / "results.md").read_text()
    for lane in ("tiny_chain: shrew cuda failed", "tiny_chain: shrew-compiled cuda failed",
                 "mlp_step: shrew cuda bf16 autocast failed"):
        assert lane in table, lane
    assert "tiny_chain: shrew cuda bf16" not in table   # (no autocast lane there)
    assert "shrew cpu" not in table and "torch-compiled cpu" not in table


def test_rnn_step_matches_torch(monkeypatch):
    pytest.importorskip("torch")
    import torch

    import rnn_step
    import shrew
    for name, small in (("VOCAB", 50), ("EMBED", 16), ("HIDDEN", 16), ("SEQ", 6), ("BATCH", 3)):
        monkeypatch.setattr(rnn_step, name, small)
    for cell in ("LSTM", "GRU"):
        step_s, step_t = rnn_step.make_step(shrew, cell), rnn_step.make_step(torch, cell)
        assert [step_s(), step_s()] == pytest.approx([step_t(), step_t()], rel=1e-4)
