"""shrew.utils.tensorboard.SummaryWriter: what it writes, TensorBoard's own reader reads
back (tags, steps, values), and it matches what torch's SummaryWriter writes."""
from __future__ import annotations

import io
import os

import numpy as np
import pytest

pytest.importorskip("tensorboard")
torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import shrew  # noqa: E402
from shrew.utils.tensorboard import SummaryWriter  # noqa: E402


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "scalars": 0,
                                                     "images": 0, "histograms": 0})
    acc.Reload()
    return acc


def test_scalars_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(4):
            w.add_scalar("train/loss", shrew.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.5, 7, double_precision=True)
        w.add_scalars("cmp", {"a": 1.5, "b/c": 2.5}, 3)
    acc = _read(tmp_path)
    loss = acc.Scalars("train/loss")
    assert [e.step for e in loss] == [0, 1, 2, 3]
    assert [e.value for e in loss] == pytest.approx([1.0, 0.5, 1 / 3, 0.25])
    assert acc.Tensors("lr")[0].tensor_proto.double_val == [0.5]
    # one run per scalar, named as torch names it
    assert [(e.step, e.value) for e in _read(tmp_path / "cmp_a").Scalars("cmp")] == [(3, 1.5)]
    assert [(e.step, e.value) for e in _read(tmp_path / "cmp_b" / "c").Scalars("cmp")] == [
        (3, 2.5)]


def test_histogram_matches_torch(tmp_path):
    values = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    with SummaryWriter(tmp_path / "s") as w:
        w.add_histogram("w", shrew.tensor(values), 2)
        w.add_histogram("w10", values, 2, bins=10)
    with TorchWriter(str(tmp_path / "t")) as w:
        w.add_histogram("w", torch.tensor(values), 2)
        w.add_histogram("w10", values, 2, bins=10)
    for tag in ("w", "w10"):
        ours = _read(tmp_path / "s").Histograms(tag)[0]
        theirs = _read(tmp_path / "t").Histograms(tag)[0]
        assert ours.step == theirs.step == 2
        for field in ("min", "max", "num", "sum", "sum_squares", "bucket_limit", "bucket"):
            assert getattr(ours.histogram_value, field) == pytest.approx(
                getattr(theirs.histogram_value, field), rel=1e-6), field


@pytest.mark.parametrize("shape,fmt", [((3, 6, 5), "CHW"), ((6, 5, 3), "HWC"),
                                       ((6, 5), "HW"), ((1, 6, 5), "CHW")])
@pytest.mark.parametrize("dtype", ["float32", "uint8"])
def test_image_pixels_match_torch(tmp_path, shape, fmt, dtype):
    from PIL import Image
    rng = np.random.default_rng(1)
    img = (rng.random(shape).astype(np.float32) if dtype == "float32"
           else rng.integers(0, 256, shape, dtype=np.uint8))
    with SummaryWriter(tmp_path / "s") as w:
        w.add_image("im", shrew.tensor(img), 5, dataformats=fmt)
    with TorchWriter(str(tmp_path / "t")) as w:
        w.add_image("im", torch.tensor(img), 5, dataformats=fmt)
    ours, theirs = (_read(tmp_path / d).Images("im")[0] for d in "st")
    assert (ours.step, ours.width, ours.height) == (theirs.step, theirs.width, theirs.height)
    pixels = [np.asarray(Image.open(io.BytesIO(e.encoded_image_string)).convert("RGB"))
              for e in (ours, theirs)]
    np.testing.assert_array_equal(*pixels)


def test_images_grid_figure_text(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    batch = np.random.default_rng(2).random((10, 3, 4, 4)).astype(np.float32)
    with SummaryWriter(tmp_path) as w:
        w.add_images("batch", batch, 1)
        w.add_images("nhwc", batch.transpose(0, 2, 3, 1), 1, dataformats="NHWC")
        fig = plt.figure(figsize=(2, 1), dpi=50)
        plt.plot([0, 1], [1, 0])
        w.add_figure("fig", fig, 3)
        w.add_text("note", "hello **world**", 4)
    acc = _read(tmp_path)
    grid = acc.Images("batch")[0]
    assert (grid.width, grid.height) == (8 * 4, 2 * 4)  # eight a row, as torch
    assert acc.Images("nhwc")[0].encoded_image_string == grid.encoded_image_string
    assert (acc.Images("fig")[0].step, acc.Images("fig")[0].width) == (3, 100)
    assert not plt.fignum_exists(fig.number)  # close=True
    text = acc.Tensors("note/text_summary")[0]
    assert (text.step, text.tensor_proto.string_val) == (4, [b"hello **world**"])


def test_hparams_read_by_the_hparams_plugin(tmp_path):
    from tensorboard.plugins.hparams import plugin_data_pb2
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"lr": 0.1, "opt": "sgd", "bn": True, "depth": shrew.tensor(3)},
                      {"hparam/acc": 0.75}, run_name="trial")
    acc = _read(tmp_path / "trial")
    meta = acc.summary_metadata["_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(meta.plugin_data.content)
    hp = start.session_start_info.hparams
    assert (hp["lr"].number_value, hp["opt"].string_value, hp["bn"].bool_value,
            hp["depth"].number_value) == (0.1, "sgd", True, 3)
    assert acc.Scalars("hparam/acc")[0].value == 0.75
    assert "_hparams_/experiment" in acc.summary_metadata


def test_default_log_dir_comment_and_purge_step(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    t = TorchWriter(comment="_lr0.1")
    assert os.path.dirname(w.log_dir) == "runs"
    assert w.log_dir.endswith("_lr0.1")
    assert w.get_logdir().split("_")[-2:] == t.get_logdir().split("_")[-2:]
    w.close()
    t.close()
    run = tmp_path / "purge"
    with SummaryWriter(run) as w:
        for step in range(10):
            w.add_scalar("x", step, step)
    with SummaryWriter(run, purge_step=5) as w:  # a restart from step 5's checkpoint
        w.add_scalar("x", 50.0, 5)
    assert [(e.step, e.value) for e in _read(run).Scalars("x")] == [
        (0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 50.0)]


def test_errors(tmp_path):
    w = SummaryWriter(tmp_path)
    with pytest.raises(shrew.UnsupportedError, match="add_graph"):
        w.add_graph(shrew.nn.Linear(2, 2), shrew.ones(1, 2))
    with pytest.raises(shrew.ArgumentError, match="dataformats"):
        w.add_image("im", np.zeros((3, 4, 4)), dataformats="NCHW")
    with pytest.raises(shrew.ArgumentError, match="one value"):
        w.add_scalar("s", shrew.ones(2))
    with pytest.raises(TypeError):  # torch: TypeError for a non-dict
        w.add_hparams([("lr", 1)], {})
    w.close()
    with pytest.raises(shrew.StateError, match="closed"):
        w.add_scalar("s", 1.0)
