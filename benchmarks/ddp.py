"""Data-parallel training on MPI: all-reduce latency and bandwidth, and mlp_step throughput.

    python benchmarks/ddp.py [--quick] [--out benchmarks/results/ddp.md]

Runs, each in fresh processes with one BLAS thread per process unless said otherwise:
- all-reduce of float32 buffers from 4 KiB to 64 MiB on 2 ranks: MPI's own Allreduce
  (mpi4py, in place), shrew's fixed-order reduction on the same numpy buffer (metadata
  check, reduce-scatter, rank-order sum, all-gather), and `shrew.distributed.all_reduce`
  on a tensor (plus staging through a host copy and the write-back);
- mlp_step (784-1024-1024-10, global batch 256, SGD): 1 process with 1 thread, 1 process
  with 2 threads, and 2 processes of 1 thread under DistributedDataParallel (128 samples
  each), in samples per second;
- in the 2-process run, the share of the gradient all-reduce hidden behind backward:
  1 - (DDP step - local step) / (all-reduce of every gradient, alone).
Timings are medians; on a shared or loaded machine they say little, so the table records
the load average.  `mpiexec` is the one beside this Python, else the one on PATH."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
GLOBAL_BATCH = 256


def _median_time(fn, reps: int) -> float:
    """Median seconds of `reps` calls of fn().  The count is fixed, never time-based: every
    rank must make the same number of collective calls."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


# -- workers (run under mpiexec or alone) ---------------------------------------------

def worker_allreduce(quick: bool) -> None:
    import shrew
    import shrew.distributed as dist
    from shrew.distributed.collectives import ReduceOp, all_reduce_array
    from shrew.distributed.group import default_group
    from shrew.distributed.work import Work
    dist.init_process_group("mpi")
    from mpi4py import MPI
    group = default_group("benchmark")
    comm = MPI.COMM_WORLD
    for nbytes in SIZES:
        reps = max(3, min(40, (64 << 20) // nbytes // (4 if quick else 1)))
        buf = np.ones(nbytes // 4, np.float32)
        t = shrew.from_numpy(buf.copy())
        variants = {
            "mpi": lambda buf=buf: comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM),
            "fixed": lambda buf=buf: Work("bench", group, all_reduce_array(
                group, buf, ReduceOp.SUM), True).wait(),
            "tensor": lambda t=t: dist.all_reduce(t),
        }
        row = {"bytes": nbytes}
        for name, fn in variants.items():
            comm.Barrier()
            row[name] = _median_time(fn, reps)
        if dist.get_rank() == 0:
            print("ROW " + json.dumps(row), flush=True)
    dist.destroy_process_group()


def worker_mlp(quick: bool, bucket_cap_mb: float) -> None:
    sys.path.insert(0, str(HERE))
    import shrew
    import shrew.distributed as dist
    from shrew import nn, optim
    from shrew.distributed.collectives import ReduceOp, all_reduce_array
    from shrew.distributed.work import Work
    from shrew.nn import functional as F
    from shrew.nn.parallel import DistributedDataParallel
    from workloads import LEARNING_RATE, mlp_step
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    problem = mlp_step()
    share = GLOBAL_BATCH // world
    x = shrew.tensor(problem.inputs["x"][rank * share:(rank + 1) * share])
    y = shrew.tensor(problem.inputs["y"][rank * share:(rank + 1) * share])
    model = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
    model.load_state_dict(problem.params)
    steps = 4 if quick else 12

    def timed(net: nn.Module) -> float:
        opt = optim.SGD(net.parameters(), lr=LEARNING_RATE)

        def step() -> None:
            opt.zero_grad()
            F.cross_entropy(net(x), y).backward()
            opt.step()
        step()
        dist.barrier()
        return _median_time(step, steps)
    local = timed(model)              # this rank's share, no communication
    result = {"world": world, "threads": os.environ.get("OMP_NUM_THREADS"),
              "local_step": local}
    if world > 1:
        ddp = DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb)
        result["ddp_step"] = timed(ddp)
        result["buckets"] = len(ddp._buckets)
        ddp.remove_hooks()
        group = ddp._group
        flats = [np.concatenate([p.numpy().reshape(-1) for p in b.params]) for b in ddp._buckets]

        def reduce_all() -> None:
            for w in [Work("bench", group, all_reduce_array(group, f, ReduceOp.AVG), True)
                      for f in flats]:
                w.wait()
        dist.barrier()
        result["allreduce"] = _median_time(reduce_all, steps)
    if rank == 0:
        print("ROW " + json.dumps(result), flush=True)
    dist.destroy_process_group()


# -- the driver ------------------------------------------------------------------------

def _launch(n: int | None, args: list[str], threads: int) -> list[dict]:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [sys.executable, str(Path(__file__).resolve())] + args
    if n is not None:
        cmd = [str(mpiexec) if mpiexec.exists() else shutil.which("mpiexec") or "mpiexec",
               "-n", str(n)] + cmd
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE.parent),
                                                      os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    if out.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return [json.loads(line[4:]) for line in out.stdout.splitlines() if line.startswith("ROW ")]


def _fmt_bytes(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"


def drive(quick: bool, out: Path | None) -> str:
    q = ["--quick"] if quick else []
    load = os.getloadavg()[0]
    lines = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
             f"{os.cpu_count()} cores, load average {load:.1f}{' (quick)' if quick else ''}.",
             "", "All-reduce of float32 on 2 ranks (loopback), median time and bus bandwidth "
             "(2 (N-1)/N bytes / time):", "",
             "| size | MPI Allreduce | shrew fixed order | shrew all_reduce(tensor) |",
             "|---|---|---|---|"]
    for row in _launch(2, ["allreduce"] + q, 1):
        cells = [f"{row[k] * 1e6:,.0f} us, {row['bytes'] / row[k] / 1e9:.2f} GB/s"
                 for k in ("mpi", "fixed", "tensor")]
        lines.append(f"| {_fmt_bytes(row['bytes'])} | " + " | ".join(cells) + " |")
    one_1 = _launch(None, ["mlp"] + q, 1)[0]
    one_2 = _launch(None, ["mlp"] + q, 2)[0]
    two = {cap: _launch(2, ["mlp", "--bucket-cap-mb", str(cap)] + q, 1)[0] for cap in (25, 1)}
    lines += ["", f"mlp_step (784-1024-1024-10, global batch {GLOBAL_BATCH}, SGD):", "",
              "| run | step | samples/s |", "|---|---|---|",
              f"| 1 process, 1 thread | {one_1['local_step'] * 1e3:.1f} ms | "
              f"{GLOBAL_BATCH / one_1['local_step']:,.0f} |",
              f"| 1 process, 2 threads | {one_2['local_step'] * 1e3:.1f} ms | "
              f"{GLOBAL_BATCH / one_2['local_step']:,.0f} |"]
    for cap, r in two.items():
        lines.append(f"| 2 processes x 1 thread, DDP bucket_cap_mb={cap} ({r['buckets']} "
                     f"buckets) | {r['ddp_step'] * 1e3:.1f} ms | "
                     f"{GLOBAL_BATCH / r['ddp_step']:,.0f} |")
    lines += ["", "| DDP bucket_cap_mb | local step (128 samples) | all-reduce alone | "
              "DDP step | all-reduce hidden |", "|---|---|---|---|---|"]
    for cap, r in two.items():
        exposed = r["ddp_step"] - r["local_step"]
        hidden = min(max(1.0 - exposed / r["allreduce"], 0.0), 1.0)
        lines.append(f"| {cap} | {r['local_step'] * 1e3:.1f} ms | {r['allreduce'] * 1e3:.1f} ms"
                     f" | {r['ddp_step'] * 1e3:.1f} ms | {hidden:.0%} |")
    text = "\n".join(lines) + "\n"
    if out is not None:
        out.write_text("# benchmarks/ddp.py\n\n" + text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("job", nargs="?", choices=["allreduce", "mlp"])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    if args.job == "allreduce":
        worker_allreduce(args.quick)
    elif args.job == "mlp":
        worker_mlp(args.quick, args.bucket_cap_mb)
    else:
        print(drive(args.quick, args.out))


if __name__ == "__main__":
    main()
