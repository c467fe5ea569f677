"""Jobs that tests/test_distributed.py runs under `mpiexec -n N python tests/mpi_jobs.py JOB`.

Each job runs many checks in one launch (a launch costs about a second) and prints a line
per group of checks that passed; a failed check raises, which aborts the whole job with a
message naming the rank (the abort-on-error hook of init_process_group)."""
from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile

import numpy as np

import shrew
import shrew.distributed as dist
import shrew.nn as nn
import shrew.nn.functional as F
from shrew.nn.parallel import DistributedDataParallel as DDP

R = dist.ReduceOp
DTYPES = [shrew.float16, shrew.float32, shrew.float64, shrew.int32, shrew.int64, shrew.bool]
SHAPES = [(), (1,), (7,), (2, 3, 5), (0, 4)]  # 7 and 30 elements do not divide by 2 or 3


def say(msg: str) -> None:
    if dist.get_rank() == 0:
        print(msg, flush=True)


def rank_data(rank: int, shape: tuple[int, ...], dtype: shrew.DType, salt: int = 0) -> np.ndarray:
    """Rank `rank`'s values: small integers (exact in float16, products stay small)."""
    rng = np.random.default_rng(1000 * rank + salt)
    if dtype == shrew.bool:
        return rng.random(shape) < 0.5
    return rng.integers(-3, 4, shape).astype(dtype.np)


def fold(rows: list[np.ndarray], op: R) -> np.ndarray:
    """numpy's reference: rank 0's values combined with rank 1's, then rank 2's, ..."""
    if rows[0].dtype == np.bool_:
        ufunc = np.logical_or if op in (R.SUM, R.MAX) else np.logical_and
    else:
        ufunc = {R.SUM: np.add, R.AVG: np.add, R.PRODUCT: np.multiply, R.MIN: np.minimum,
                 R.MAX: np.maximum}[op]
    acc = rows[0].copy()
    for row in rows[1:]:
        acc = ufunc(acc, row).astype(acc.dtype)
    if op is R.AVG:
        acc = (acc / acc.dtype.type(len(rows))).astype(acc.dtype)
    return acc


def same(got: shrew.Tensor, want: np.ndarray, what: str) -> None:
    g = got.numpy()
    if g.shape != want.shape or g.dtype != want.dtype or not np.array_equal(g, want):
        raise AssertionError(f"rank {dist.get_rank()}: {what}: got {g!r}, want {want!r}")


# -- collectives --------------------------------------------------------------------------

def check_collectives(device: str = "cpu") -> None:
    rank, n = dist.get_rank(), dist.get_world_size()
    ops = [R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX]
    for dtype in DTYPES:
        if device != "cpu" and dtype in (shrew.float16, shrew.float64):
            continue
        for shape in SHAPES:
            rows = [rank_data(r, shape, dtype) for r in range(n)]
            for op in ops:
                if op is R.AVG and not dtype.is_floating_point:
                    continue
                t = shrew.tensor(rows[rank], dtype=dtype, device=device)
                dist.all_reduce(t, op=op)
                same(t, fold(rows, op), f"all_reduce {op} {dtype} {shape}")
            for src in range(n):
                t = shrew.tensor(rows[rank], dtype=dtype, device=device)
                dist.broadcast(t, src=src)
                same(t, rows[src], f"broadcast from {src} {dtype} {shape}")
            outs = [shrew.zeros(*shape, dtype=dtype, device=device) for _ in range(n)]
            dist.all_gather(outs, shrew.tensor(rows[rank], dtype=dtype, device=device))
            for r in range(n):
                same(outs[r], rows[r], f"all_gather {dtype} {shape}")
            if shape:
                big = shrew.zeros(n * shape[0], *shape[1:], dtype=dtype, device=device)
                dist.all_gather_into_tensor(big, shrew.tensor(rows[rank], dtype=dtype,
                                                               device=device))
                same(big, np.concatenate(rows), f"all_gather_into_tensor {dtype} {shape}")
                chunks = [rank_data(r, (n * shape[0],) + shape[1:], dtype, 1) for r in range(n)]
                for op in ops:
                    if op is R.AVG and not dtype.is_floating_point:
                        continue
                    out = shrew.zeros(*shape, dtype=dtype, device=device)
                    dist.reduce_scatter_tensor(out, shrew.tensor(chunks[rank], device=device),
                                               op=op)
                    mine = [c.reshape(n, -1)[rank].reshape(shape) for c in chunks]
                    same(out, fold(mine, op), f"reduce_scatter_tensor {op} {dtype} {shape}")
            stacked = shrew.zeros(n, *shape, dtype=dtype, device=device)
            dist.all_gather_into_tensor(stacked, shrew.tensor(rows[rank], dtype=dtype,
                                                               device=device))
            same(stacked, np.stack(rows), f"all_gather_into_tensor stacked {dtype} {shape}")
            for root in range(n):
                got = ([shrew.zeros(*shape, dtype=dtype, device=device) for _ in range(n)]
                       if rank == root else None)
                dist.gather(shrew.tensor(rows[rank], dtype=dtype, device=device), got, dst=root)
                for r in range(n if got else 0):
                    same(got[r], rows[r], f"gather to {root} {dtype} {shape}")
                t = shrew.zeros(*shape, dtype=dtype, device=device)
                pieces = [rank_data(root, shape, dtype, 10 + r) for r in range(n)]
                dist.scatter(t, [shrew.tensor(p, dtype=dtype, device=device) for p in pieces]
                             if rank == root else None, src=root)
                same(t, rank_data(root, shape, dtype, 10 + rank), f"scatter from {root}")
    say(f"OK collectives {device}")


def check_async_and_p2p() -> None:
    rank, n = dist.get_rank(), dist.get_world_size()
    ts = [shrew.full((5,), float(rank + i)) for i in range(4)]
    works = [dist.all_reduce(t, async_op=True) for t in ts]
    for w in reversed(works):
        assert w.wait() is True and w.is_completed()
    for i, t in enumerate(ts):
        same(t, np.full(5, sum(r + i for r in range(n)), np.float32), "async all_reduce")
    # A ring of sends: to the right, from the left, blocking and non-blocking.
    right, left = (rank + 1) % n, (rank - 1) % n
    out = shrew.zeros(2, 3, dtype=shrew.int64)
    recv_work = dist.irecv(out, src=left, tag=7)
    send_work = dist.isend(shrew.full((2, 3), rank, dtype=shrew.int64), dst=right, tag=7)
    send_work.wait()
    recv_work.wait()
    same(out, np.full((2, 3), left, np.int64), "isend/irecv ring")
    if rank == 0:
        senders = set()
        for _ in range(n - 1):
            x = shrew.zeros(1)
            src = dist.recv(x)              # from any rank
            same(x, np.array([float(src)], np.float32), "recv from any")
            senders.add(src)
        assert senders == set(range(1, n)), senders
    else:
        dist.send(shrew.tensor([float(rank)]), dst=0)
    dist.barrier()
    say("OK async and p2p")


def check_mismatches() -> None:
    """Disagreeing ranks get the same clear error everywhere; the group still works after."""
    rank, n = dist.get_rank(), dist.get_world_size()
    cases = [
        (lambda: dist.all_reduce(shrew.zeros(3 if rank != n - 1 else 4)), shrew.ShapeError,
         f"shape [4] on rank {n - 1} but [3] on rank 0"),
        (lambda: dist.broadcast(shrew.zeros(2, dtype=shrew.float64 if rank == 1
                                            else shrew.float32), src=0),
         shrew.DTypeError, "dtype shrew.float64 on rank 1 but shrew.float32 on rank 0"),
        (lambda: dist.all_reduce(shrew.zeros(2)) if rank != 1 else dist.barrier(),
         shrew.ShrewError, "rank 1 called barrier"),
        (lambda: dist.all_reduce(shrew.ones(2), op=R.MAX if rank == 0 else R.SUM),
         shrew.ShrewError, "reduce sum on rank 1 but max on rank 0"),
    ]
    for run, kind, text in cases:
        try:
            run()
        except kind as exc:
            assert text in str(exc), (text, str(exc))
        else:
            raise AssertionError(f"rank {rank}: no {kind.__name__} for {text!r}")
    t = shrew.ones(3)
    dist.all_reduce(t)
    same(t, np.full(3, n, np.float32), "all_reduce after the mismatches")
    # Local argument errors, before any communication.
    for bad, kind in [(lambda: dist.all_reduce(shrew.ones(2, dtype=shrew.int64), op=R.AVG),
                       shrew.DTypeError),
                      (lambda: dist.broadcast(shrew.ones(2), src=n), shrew.ShrewError),
                      (lambda: dist.all_gather([shrew.ones(2)], shrew.ones(2)), shrew.ShrewError),
                      (lambda: dist.all_gather_into_tensor(shrew.ones(n * 2 + 1), shrew.ones(2)),
                       shrew.ShapeError),
                      (lambda: dist.all_reduce(shrew.ones(2), op="sum"), shrew.ShrewError)]:
        try:
            bad()
        except kind:
            pass
        else:
            raise AssertionError(f"rank {rank}: expected {kind.__name__}")
    say("OK mismatches")


# -- DistributedDataParallel --------------------------------------------------------------

def mlp(dtype: shrew.DType) -> nn.Module:
    return nn.Sequential(nn.Linear(6, 32), nn.GELU(), nn.Linear(32, 32), nn.ReLU(),
                         nn.Linear(32, 4)).to(dtype)


class ConvNet(nn.Module):
    def __init__(self, checkpoint: bool = False) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 4)
        self.checkpoint = checkpoint

    def features(self, x: shrew.Tensor) -> shrew.Tensor:
        x = F.max_pool2d(self.conv1(x).relu(), 2)
        return self.conv2(x).relu()

    def forward(self, x: shrew.Tensor) -> shrew.Tensor:
        h = shrew.checkpoint(self.features, x) if self.checkpoint else self.features(x)
        return self.fc(h.flatten(1))


def batch(kind: str, size: int, dtype: shrew.DType, step: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(step)
    shape = (size, 6) if kind == "mlp" else (size, 1, 8, 8)
    return rng.standard_normal(shape).astype(dtype.np), rng.integers(0, 4, size)


def build(kind: str, dtype: shrew.DType, opt_name: str, seed: int,
          device: str = "cpu") -> tuple[nn.Module, shrew.optim.Optimizer]:
    shrew.manual_seed(seed)
    model = mlp(dtype) if kind == "mlp" else ConvNet(kind == "conv_ckpt").to(dtype)
    model.to(device)
    opt = (shrew.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if opt_name == "sgd"
           else shrew.optim.AdamW(model.parameters(), lr=1e-2))
    return model, opt


def train(kind: str, dtype: shrew.DType, opt_name: str, steps: int, batch_size: int,
          accumulate: int, parallel: bool, use_store: bool = False, start: int = 0,
          model_opt: tuple[nn.Module, shrew.optim.Optimizer] | None = None,
          device: str = "cpu") -> tuple[nn.Module, shrew.optim.Optimizer]:
    """`steps` optimizer steps, each over `accumulate` micro-batches of the global batch;
    in parallel each rank takes its contiguous share of every micro-batch.  A new model is
    seeded differently on each rank: DDP must replace its parameters with rank 0's."""
    rank, n = dist.get_rank(), dist.get_world_size()
    model, opt = model_opt or build(kind, dtype, opt_name, 1234 + (rank if parallel else 0),
                                    device)
    net = DDP(model, bucket_cap_mb=0.002) if parallel else model  # several buckets
    if parallel and model_opt is None:
        reference, _ = build(kind, dtype, opt_name, 1234)
        for a, b in zip(model.parameters(), reference.parameters()):
            assert np.array_equal(a.numpy(), b.numpy()), "DDP did not copy rank 0's parameters"
    micro = batch_size // accumulate
    for step in range(start, start + steps):
        opt.zero_grad()
        x_all, y_all = batch(kind, batch_size, dtype, step)
        for k in range(accumulate):
            x, y = x_all[k * micro:(k + 1) * micro], y_all[k * micro:(k + 1) * micro]
            if parallel:
                share = micro // n
                x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]
            last = k == accumulate - 1
            with net.no_sync() if parallel and not last else contextlib.nullcontext():
                store = F.cross_entropy(net(shrew.tensor(x, device=device)),
                                        shrew.tensor(y, device=device)).backward()
        if use_store:   # the GradStore holds the averaged gradients too; step from it
            for p in model.parameters():
                assert p.grad is not None and np.array_equal(store[p].numpy(), p.grad.numpy())
            opt.step(store)
        else:
            opt.step()
    if parallel:
        net.remove_hooks()
    return model, opt


def close(a: nn.Module, b: nn.Module, rtol: float, what: str) -> None:
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values()):
        x, y = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
        err = np.abs(x - y).max() / max(np.abs(y).max(), 1e-30)
        if not err <= rtol:
            raise AssertionError(f"rank {dist.get_rank()}: {what}: {name} differs by {err:.3g} "
                                 f"relative (allowed {rtol})")


def check_ddp() -> None:
    n = dist.get_world_size()
    for kind in ("mlp", "conv", "conv_ckpt"):
        for dtype, rtol in ((shrew.float64, 1e-12), (shrew.float32, 1e-5)):
            for opt_name in ("sgd", "adamw"):
                for accumulate in (1, 2):
                    if kind == "conv_ckpt" and (dtype, accumulate) != (shrew.float64, 1):
                        continue
                    b = 4 * n * accumulate
                    one, _ = train(kind, dtype, opt_name, 5, b, accumulate, parallel=False)
                    many, _ = train(kind, dtype, opt_name, 5, b, accumulate, parallel=True,
                                    use_store=accumulate == 1)
                    close(many, one, rtol, f"{kind} {dtype} {opt_name} x{accumulate}")
    check_unused_parameter_is_named()
    say("OK ddp equals one process")


def check_unused_parameter_is_named() -> None:
    class TwoHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body, self.used, self.unused = nn.Linear(3, 3), nn.Linear(3, 1), nn.Linear(3, 1)

        def forward(self, x: shrew.Tensor) -> shrew.Tensor:
            return self.used(self.body(x))
    net = DDP(TwoHeads(), bucket_cap_mb=1e-5)
    net(shrew.ones(2, 3)).sum().backward()
    try:
        net(shrew.ones(2, 3))
    except shrew.ShrewError as exc:
        assert "gave no gradient to unused.weight, unused.bias" in str(exc), str(exc)
    else:
        raise AssertionError("DDP did not name the parameter that got no gradient")
    net.remove_hooks()
    t = shrew.ones(2)
    dist.all_reduce(t)                      # the buckets that did start have finished
    same(t, np.full(2, dist.get_world_size(), np.float32), "all_reduce after DDP's error")


def check_ddp_opencl() -> None:
    """Parameters and gradients on an OpenCL device, staged through the host."""
    n = dist.get_world_size()
    one, _ = train("mlp", shrew.float32, "adamw", 3, 4 * n, 1, parallel=False)
    many, _ = train("mlp", shrew.float32, "adamw", 3, 4 * n, 1, parallel=True,
                    use_store=True, device="opencl")
    assert all(p.device.startswith("opencl") for p in many.parameters())
    close(many, one, 1e-5, "mlp on opencl")
    say("OK ddp opencl")


def params_digest() -> str:
    model, _ = train("mlp", shrew.float32, "adamw", 5, 4 * dist.get_world_size(), 1, True)
    digest = hashlib.sha256(b"".join(p.numpy().tobytes() for p in model.parameters()))
    return digest.hexdigest()


def check_save_resume() -> None:
    """Train 6 steps; or 3, save on rank 0, rebuild everything, load on every rank, 3 more."""
    n = dist.get_world_size()
    whole, _ = train("mlp", shrew.float64, "adamw", 6, 4 * n, 1, parallel=True)
    model, opt = train("mlp", shrew.float64, "adamw", 3, 4 * n, 1, parallel=True)
    path = os.path.join(tempfile.gettempdir(), f"shrew-ddp-{os.getppid()}.safetensors")
    if dist.get_rank() == 0:
        shrew.save({**{f"model.{k}": v for k, v in model.state_dict().items()},
                    **optimizer_state(model, opt)}, path)
    dist.barrier()
    fresh, fresh_opt = build("mlp", shrew.float64, "adamw", 99 + dist.get_rank())
    saved = shrew.load(path)
    fresh.load_state_dict({k[6:]: v for k, v in saved.items() if k.startswith("model.")})
    load_optimizer_state(fresh, fresh_opt, saved)
    dist.barrier()
    if dist.get_rank() == 0:
        os.remove(path)
    resumed, _ = train("mlp", shrew.float64, "adamw", 3, 4 * n, 1, parallel=True, start=3,
                       model_opt=(fresh, fresh_opt))
    for a, b in zip(resumed.parameters(), whole.parameters()):
        assert np.array_equal(a.numpy(), b.numpy()), "resumed run differs"
    say("OK save and resume")


def optimizer_state(model: nn.Module, opt: shrew.optim.Optimizer) -> dict[str, shrew.Tensor]:
    """Adam's per-parameter state as tensors, by parameter name (for shrew.save)."""
    out = {}
    for name, p in model.named_parameters():
        for key, value in opt.state[p.id].items():
            out[f"optim.{name}.{key}"] = (value if isinstance(value, shrew.Tensor)
                                          else shrew.tensor(value))
    return out


def load_optimizer_state(model: nn.Module, opt: shrew.optim.Optimizer,
                         saved: dict[str, shrew.Tensor]) -> None:
    for name, p in model.named_parameters():
        state = opt.state.setdefault(p.id, {})
        for key in ("step", "exp_avg", "exp_avg_sq"):
            value = saved[f"optim.{name}.{key}"]
            state[key] = value.item() if key == "step" else value


# -- faults ---------------------------------------------------------------------------------

def fault_raise() -> None:
    if dist.get_rank() == 1:
        raise ValueError("a deliberate failure on rank 1")
    dist.all_reduce(shrew.ones(3))


def fault_exit() -> None:
    if dist.get_rank() == dist.get_world_size() - 1:
        sys.exit(0)                             # leaves without a word
    dist.all_reduce(shrew.ones(3))


def check_surface() -> None:
    """reduce, broadcast_object_list, the default group by its other names, and
    SyncBatchNorm against BatchNorm over the whole global batch."""
    rank, size = dist.get_rank(), dist.get_world_size()
    g = dist.new_group(backend="mpi")
    assert dist.get_rank(group=g) == rank and dist.get_world_size(group=g) == size
    dist.barrier(device_ids=[0])
    t = shrew.tensor([float(rank + 1), 2.0])
    dist.reduce(t, dst=size - 1)
    want = [size * (size + 1) / 2, 2.0 * size] if rank == size - 1 else [rank + 1.0, 2.0]
    same(t, np.array(want, np.float32), "reduce")
    objects = [{"rank": rank}, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(objects, src=0)
    assert objects == [{"rank": 0}, "x"], objects
    # SyncBatchNorm: each rank normalises its slice with the global batch's statistics
    shrew.manual_seed(0)
    data = np.random.default_rng(0).standard_normal((2 * size, 3, 4, 4))
    reference = nn.BatchNorm2d(3).double()
    synced = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3))).double()
    x_all = shrew.tensor(data, requires_grad=True)
    x_mine = shrew.tensor(data[2 * rank:2 * rank + 2], requires_grad=True)
    w = np.random.default_rng(1).standard_normal((2 * size, 3, 4, 4))
    (reference(x_all) * shrew.tensor(w)).sum().backward()
    out = synced(x_mine)
    (out * shrew.tensor(w[2 * rank:2 * rank + 2])).sum().backward()
    want_out = reference.train()(shrew.tensor(data)).detach().numpy()[2 * rank:2 * rank + 2]
    np.testing.assert_allclose(out.detach().numpy(), want_out, atol=1e-10)
    np.testing.assert_allclose(x_mine.grad.numpy(), x_all.grad.numpy()[2 * rank:2 * rank + 2],
                               atol=1e-10)
    weight_grad = synced[0].weight.grad.clone()
    dist.all_reduce(weight_grad)   # each rank holds its part; DDP sums (averages) them
    np.testing.assert_allclose(weight_grad.numpy(), reference.weight.grad.numpy(), atol=1e-10)
    say("OK surface")


def main() -> None:
    job = sys.argv[1]
    timeout = float(os.environ.get("SHREW_TEST_TIMEOUT", "60"))
    dist.init_process_group("mpi", timeout=timeout)
    if job == "main":
        check_collectives()
        if "opencl" in [d.split(":")[0] for d in shrew.devices()] and \
                os.environ.get("SHREW_TEST_OPENCL") == "1":
            check_collectives("opencl")
            check_ddp_opencl()
        check_async_and_p2p()
        if dist.get_world_size() > 1:   # one process cannot disagree with itself
            check_mismatches()
        check_ddp()
        check_save_resume()
        say("DIGEST " + params_digest())
    elif job == "surface":
        check_surface()
    elif job == "digest":
        say("DIGEST " + params_digest())
    elif job == "fault_raise":
        fault_raise()
    elif job == "fault_exit":
        fault_exit()
    else:
        raise SystemExit(f"unknown job {job!r}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
