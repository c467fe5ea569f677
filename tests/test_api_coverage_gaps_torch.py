"""The names and keywords that scripts/api_coverage.py found missing in real code (issue 30),
each against torch where both run here: random generators, in-place methods, module
helpers, and the names shrew refuses with a clear error."""
from __future__ import annotations

import math
import pickle
import sys

import numpy as np
import pytest
import torch

import shrew
import shrew.nn as nn
from shrew.testing import assert_allclose


# -- random numbers -----------------------------------------------------------------------
@pytest.mark.parametrize("draw", [
    lambda g: shrew.rand(3, 2, generator=g), lambda g: shrew.randn(4, generator=g),
    lambda g: shrew.randint(2, 9, (5,), generator=g), lambda g: shrew.randperm(6, generator=g),
    lambda g: shrew.normal(0.0, 2.0, (3,), generator=g),
    lambda g: shrew.normal(shrew.zeros(3), 1.0, generator=g),
    lambda g: shrew.ones(4).uniform_(-1, 1, generator=g),
    lambda g: shrew.ones(4).normal_(generator=g), lambda g: shrew.ones(4).cauchy_(generator=g),
    lambda g: shrew.ones(4).exponential_(generator=g),
    lambda g: shrew.ones(4).geometric_(0.3, generator=g),
    lambda g: shrew.ones(4).log_normal_(generator=g),
    lambda g: shrew.ones(4).bernoulli_(0.5, generator=g),
    lambda g: shrew.zeros(4, dtype=shrew.int64).random_(0, 100, generator=g),
    lambda g: shrew.randint_like(shrew.zeros(3), 10, generator=g)])
def test_a_generator_makes_draws_repeat(draw):
    first = draw(shrew.Generator().manual_seed(7)).numpy()
    again = draw(shrew.Generator().manual_seed(7)).numpy()
    other = draw(shrew.Generator().manual_seed(8)).numpy()
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other) or first.size < 3


def test_a_generator_must_be_a_generator():
    with pytest.raises(TypeError, match="Generator"):
        shrew.rand(2, generator=torch.Generator())


def test_randint_takes_torchs_keyword_forms():
    for kwargs in ({"high": 5, "size": (200,)}, {"low": 3, "high": 5, "size": (200,)}):
        values = shrew.randint(**kwargs).numpy()
        ref = torch.randint(**kwargs)
        assert values.dtype == np.int64 and ref.dtype == torch.int64
        assert values.min() >= kwargs.get("low", 0) and values.max() < kwargs["high"]
    assert shrew.randint(2, high=4, size=(3,)).shape == (3,)
    assert shrew.randint(4, (2, 2), dtype=shrew.int32).dtype is shrew.int32
    with pytest.raises(shrew.ArgumentError, match="size"):
        shrew.randint(high=4)


def test_distribution_fills_have_their_distributions():
    shrew.manual_seed(0)
    n = 20000
    cauchy = shrew.empty(n, dtype=shrew.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(cauchy) - 1.0) < 0.1
    assert abs(np.median(np.abs(cauchy - 1.0)) - 2.0) < 0.15  # the scale is the half-IQR
    geometric = shrew.empty(n).geometric_(0.25).numpy()
    assert geometric.min() == 1 and np.all(geometric == np.round(geometric))
    assert abs(geometric.mean() - 4.0) < 0.15
    log_normal = shrew.empty(n, dtype=shrew.float64).log_normal_(0.5, 0.25).numpy()
    assert abs(np.log(log_normal).mean() - 0.5) < 0.01
    assert abs(np.log(log_normal).std() - 0.25) < 0.01


@pytest.mark.parametrize("dtype, bound", [("float32", 2 ** 24), ("int8", 128), ("bool", 2),
                                          ("uint8", 256)])
def test_random_fill_covers_the_dtypes_range(dtype, bound):
    shrew.manual_seed(1)
    values = shrew.zeros(5000, dtype=dtype).random_().numpy().astype(np.float64)
    assert values.min() >= 0 and values.max() <= bound
    values = shrew.zeros(5000, dtype=dtype).random_(2).numpy()
    assert set(np.unique(values).tolist()) <= {0, 1}
    if dtype != "bool":
        values = shrew.zeros(500, dtype=dtype).random_(3, 7).numpy()
        assert values.min() == 3 and values.max() == 6


# -- in-place forms of the elementwise methods -------------------------------------------------
@pytest.mark.parametrize("name, args", [
    ("gt_", (0.0,)), ("ge_", (0.5,)), ("sign_", ()), ("erfinv_", ()), ("rsqrt_", ()),
    ("triu_", (1,)), ("tril_", ()), ("clip_", (-0.5, 0.5)), ("addmm_", "mm"),
    ("lerp_", "other"), ("atan2_", "other"), ("logical_not_", ()), ("nan_to_num_", ()),
    ("deg2rad_", ()), ("float_power_", (2,)), ("fmod_", (0.3,)), ("hypot_", "other")])
def test_inplace_methods_match_torch(name, args):
    data = np.random.default_rng(2).uniform(-0.9, 0.9, (3, 3))
    if name == "rsqrt_":
        data = np.abs(data) + 0.1
    t, s = torch.tensor(data), shrew.tensor(data)
    if args == "mm":
        args_t, args_s = (torch.tensor(data), torch.tensor(data)), (shrew.tensor(data),) * 2
    elif args == "other":
        args_t, args_s = (torch.tensor(data.T),), (shrew.tensor(data.T),)
    else:
        args_t = args_s = args
    if name == "lerp_":
        args_t, args_s = args_t + (0.3,), args_s + (0.3,)
    out = getattr(s, name)(*args_s)
    getattr(t, name)(*args_t)
    assert out is s and s._version == 1
    np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_inplace_method_through_a_view_reaches_the_base_with_gradients():
    base = shrew.zeros(2, 3, dtype=shrew.float64, requires_grad=True)
    x = base * 1.0
    x[0].sin_()
    x[1].add_(1.0).log1p_()
    ref = torch.zeros(2, 3, dtype=torch.float64, requires_grad=True)
    y = ref * 1.0
    y[0].sin_()
    y[1].add_(1.0).log1p_()
    np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy())
    grad = (x * shrew.arange(6.0, dtype=shrew.float64).reshape(2, 3)).sum().backward()[base]
    (ref_grad,) = torch.autograd.grad((y * torch.arange(6.0, dtype=torch.float64)
                                       .reshape(2, 3)).sum(), ref)
    np.testing.assert_allclose(grad.numpy(), ref_grad.numpy())


def test_flip_takes_dims_by_keyword():
    x = np.arange(6.0).reshape(2, 3)
    assert np.array_equal(shrew.tensor(x).flip(dims=(1,)).numpy(),
                          torch.tensor(x).flip(dims=(1,)).numpy())
    assert np.array_equal(shrew.tensor(x).flip(0, 1).numpy(), torch.tensor(x).flip(0, 1).numpy())


def test_a_tensor_of_strings_is_a_type_error_as_in_torch():
    for data in (np.array(["a", "b"]), np.array([b"x"]), np.array([{}], dtype=object)):
        with pytest.raises(TypeError):
            torch.tensor(data)
        with pytest.raises(TypeError, match="numpy dtype"):
            shrew.tensor(data)


# -- modules -----------------------------------------------------------------------------
def test_module_compile_runs_the_module_with_its_hooks():
    model = nn.Linear(3, 2)
    x = shrew.randn(4, 3)
    want = model(x).detach().numpy()
    seen = []
    model.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    assert model.compile(backend="inductor", mode="max-autotune", fullgraph=False) is None
    np.testing.assert_allclose(model(x).detach().numpy(), want)
    assert seen == [(4, 2)]


def test_get_parameter_and_buffer_follow_dotted_paths():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    assert model.get_parameter("0.weight") is model[0].weight
    assert model.get_buffer("1.running_mean") is model[1].running_mean
    with pytest.raises(AttributeError, match="parameter 'running_mean'"):
        model.get_parameter("1.running_mean")


def test_module_type_takes_a_legacy_tensor_class():
    model = nn.Linear(2, 2)
    model.type(shrew.DoubleTensor)
    assert model.weight.dtype is shrew.float64
    model.type("torch.FloatTensor")
    assert model.weight.dtype is shrew.float32


def test_sync_batchnorm_without_a_process_group_is_batchnorm():
    shrew.manual_seed(0)
    plain = nn.BatchNorm2d(3)
    synced = nn.SyncBatchNorm(3)
    x = shrew.randn(4, 3, 2, 2)
    np.testing.assert_allclose(synced(x).detach().numpy(), plain(x).detach().numpy())
    np.testing.assert_allclose(synced.running_var.numpy(), plain.running_var.numpy())
    model = nn.SyncBatchNorm.convert_sync_batchnorm(
        nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3).eval()))
    assert isinstance(model[1], nn.SyncBatchNorm) and not model[1].training
    assert type(nn.modules.batchnorm.SyncBatchNorm) is type(nn.SyncBatchNorm)


def test_ddp_takes_static_graph():
    import inspect
    params = inspect.signature(nn.parallel.DistributedDataParallel).parameters
    assert {"static_graph", "gradient_as_bucket_view"} <= set(params)


# -- devices, distributed ------------------------------------------------------------------
@pytest.mark.skipif(shrew.cuda.is_available(), reason="checks the answers without a GPU")
def test_cuda_streams_without_a_gpu_raise_a_device_error():
    for make in (lambda: shrew.cuda.Stream(), lambda: shrew.cuda.current_stream(device=0),
                 lambda: shrew.cuda.default_stream()):
        with pytest.raises(RuntimeError, match="no CUDA device"):
            make()
    with shrew.cuda.stream(None):
        pass
    with pytest.raises(RuntimeError):
        shrew.cuda.synchronize(device=0)


def test_distributed_names_before_init():
    dist = shrew.distributed
    assert dist.is_nccl_available() is False and dist.is_gloo_available() is False
    for call in (lambda: dist.get_rank(group=None), lambda: dist.new_group(backend="mpi"),
                 lambda: dist.reduce(shrew.ones(1), dst=0)):
        with pytest.raises(shrew.ArgumentError, match="init_process_group"):
            call()
    with pytest.raises(shrew.UnsupportedError, match="DTensor"):
        dist.tensor.DTensor()


# -- hub, jit, onnx, testing, serialization, backends -------------------------------------------
def test_hub_loads_a_local_repository(tmp_path, monkeypatch):
    (tmp_path / "hubconf.py").write_text(
        "import shrew\n\ndef tiny(width=2):\n    return shrew.nn.Linear(width, 1)\n")
    model = shrew.hub.load(str(tmp_path), "tiny", 3, source="local", force_reload=True,
                           skip_validation=True)
    assert model.weight.shape == (1, 3)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    cached = tmp_path / "hub" / "someone_repo_main"
    cached.mkdir(parents=True)
    (cached / "hubconf.py").write_text((tmp_path / "hubconf.py").read_text())
    assert shrew.hub.list("someone/repo") == ["tiny"]
    with pytest.raises(ValueError, match="downloads nothing"):
        shrew.hub.load("someone/absent", "tiny")
    assert shrew.hub.HASH_REGEX.search("resnet18-f37072fd.pth").group(1) == "f37072fd"
    assert shrew.utils.model_zoo.load_url is shrew.hub.load_state_dict_from_url


def test_torchscript_names():
    from shrew.jit.annotations import Dict, List
    assert List[int] == list[int] or List is __import__("typing").List
    assert Dict is __import__("typing").Dict
    assert shrew.jit.annotate(List[int], [1]) == [1]
    assert issubclass(shrew.jit.TracerWarning, Warning)
    with pytest.raises(shrew.UnsupportedError, match="TorchScript"):
        shrew.utils.mobile_optimizer.optimize_for_mobile(None)


def test_onnx_enums_and_optimizer_names():
    assert shrew.onnx.TrainingMode.EVAL.name == torch.onnx.TrainingMode.EVAL.name
    assert shrew.onnx.OperatorExportTypes.ONNX_ATEN_FALLBACK.name == "ONNX_ATEN_FALLBACK"
    assert repr(shrew.optim.optimizer.required) == "<required parameter>"
    assert shrew.optim.optimizer.ParamsT is not None


def test_assert_allclose_compares_in_the_actual_dtype():
    assert_allclose(shrew.tensor([1.0, float("nan")]), [1.0, float("nan")])
    assert_allclose(shrew.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]), rtol=1e-5, atol=0)
    with pytest.raises(AssertionError):
        assert_allclose(shrew.tensor([1.0]), [1.1])


def test_unsafe_globals_in_a_checkpoint_match_torch(tmp_path):
    import collections
    path = tmp_path / "x.pt"
    torch.save({"a": torch.ones(2), "o": collections.OrderedDict(), "f": math.floor,
                "s": {1, 2}}, path)
    assert shrew.serialization.get_unsafe_globals_in_checkpoint(str(path)) == \
        torch.serialization.get_unsafe_globals_in_checkpoint(str(path))
    shrew.save({"w": shrew.ones(2)}, str(tmp_path / "y.pt"))
    assert shrew.serialization.get_unsafe_globals_in_checkpoint(str(tmp_path / "y.pt")) == []


def test_backend_switches():
    with shrew.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False):
        assert shrew.nn.attention.current_backends() == (shrew.nn.attention.SDPBackend.MATH,
                                                         shrew.nn.attention.SDPBackend
                                                         .CUDNN_ATTENTION)
    assert shrew.backends.opt_einsum.enabled == shrew.backends.opt_einsum.is_available()


def test_tensorboard_summary_hparams():
    pytest.importorskip("tensorboard")
    from shrew.utils.tensorboard.summary import hparams
    exp, start, end = hparams({"lr": 0.1}, metric_dict={"a": 1})
    assert exp.value[0].tag == "_hparams_/experiment"
    assert end.value[0].tag == "_hparams_/session_end_info"


# -- legacy storage, layouts, nested tensors, F.multi_head_attention_forward -------------------
def test_byte_storage_from_buffer_round_trips_a_pickle():
    payload = pickle.dumps({"epoch": 3})
    t = shrew.ByteTensor(shrew.ByteStorage.from_buffer(payload))
    ref = torch.ByteTensor(torch.ByteStorage.from_buffer(payload))
    assert np.array_equal(t.numpy(), ref.numpy())
    assert pickle.loads(t.numpy().tobytes()) == {"epoch": 3}
    assert shrew.ByteStorage(4).shape == (4,)


def test_nested_tensors_are_refused_saying_what_to_use():
    assert repr(shrew.jagged).endswith(".jagged") and shrew.strided is shrew.core.layout.strided
    with pytest.raises(shrew.UnsupportedError, match="pad_sequence"):
        shrew.nested.nested_tensor([shrew.ones(2), shrew.ones(3)], layout=shrew.jagged,
                                   device="cpu")
    assert sys.modules["shrew.nested"] is shrew.nested


def test_multi_head_attention_forward_equals_the_module():
    shrew.manual_seed(3)
    mha = nn.MultiheadAttention(4, 2)
    q = shrew.randn(3, 2, 4)
    want, want_w = mha(q, q, q)
    got, got_w = nn.functional.multi_head_attention_forward(
        q, q, q, 4, 2, mha.in_proj_weight, mha.in_proj_bias, None, None, False, 0.0,
        mha.out_proj.weight, mha.out_proj.bias, training=False)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(got_w.detach().numpy(), want_w.detach().numpy(), rtol=1e-6)
    with pytest.raises(shrew.ShapeError, match="embedding dimension"):
        nn.functional.multi_head_attention_forward(
            q, q, q, 5, 2, mha.in_proj_weight, None, None, None, False, 0.0,
            mha.out_proj.weight, None)


def test_two_leaves_given_one_gradient_tensor_get_grads_of_their_own():
    """add's rule hands one tensor to both inputs: each .grad must be its own, or an
    in-place clip of one scales the other twice (found by an LSTM's two biases)."""
    a = shrew.ones(3, requires_grad=True)
    b = shrew.ones(3, requires_grad=True)
    (a + b).sum().backward()
    assert a.grad is not b.grad
    shrew.nn.utils.clip_grad_norm_([a, b], 0.5)
    ta, tb = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    (ta + tb).sum().backward()
    torch.nn.utils.clip_grad_norm_([ta, tb], 0.5)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    lstm, ref = nn.LSTM(2, 3), torch.nn.LSTM(2, 3)
    for p, q in zip(lstm.parameters(), ref.parameters()):
        p.data.copy_(shrew.tensor(q.detach().numpy()))
    x = np.random.default_rng(3).standard_normal((4, 1, 2)).astype(np.float32)
    lstm(shrew.tensor(x))[0].sum().backward()
    ref(torch.tensor(x))[0].sum().backward()
    shrew.nn.utils.clip_grad_norm_(lstm.parameters(), 0.01)
    torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.01)
    for p, q in zip(lstm.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-7)
