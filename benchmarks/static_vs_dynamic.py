"""Static against dynamic graphs: one training step of mlp_step and cnn_step (see
workloads.py) run by eager shrew, by the C file shrew.export writes for it (its own
blocked matmul, and with -DSHREW_USE_CBLAS on OpenBLAS), and by PyTorch.

    python benchmarks/static_vs_dynamic.py [--scale 1.0] [--steps 5]

Everything runs on one thread (OPENBLAS_NUM_THREADS=1, torch.set_num_threads(1)), each
in a fresh worker process.  Reports per workload the median milliseconds per step; the
growth of peak RSS over the steps above the resident size before them, after free heap
memory went back to the OS (Linux: malloc_trim, /proc/self/clear_refs): what the step
itself needs beyond the model and data; and, from the export, the memory plan's arena
(persistent state + planned temporaries), its temporaries with and without reuse, and
eager shrew's peak allocation for the same step (tracemalloc).  Before timing, every
worker's first loss must match eager shrew's to 1e-4.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads  # noqa: E402
from workloads import LEARNING_RATE  # noqa: E402

WORKLOADS = ("mlp_step", "cnn_step")
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
FLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
         "-DSHREW_NO_MAIN"]


def _problem(name: str, scale: float):
    return getattr(workloads, name)(scale)


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(field + ":"))
    return int(line.split()[1])


def _reset_peak() -> int:
    """Hand free heap memory back to the OS and restart the peak-RSS count (Linux:
    clear_refs 5); the resident KiB now, from which the step's growth is measured."""
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_kib("VmRSS")


def _time(step, steps: int) -> tuple[float, list[float]]:
    losses = [step()]  # warm-up, and the loss checked against eager shrew
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3, losses


def worker(kind: str, name: str, scale: float, steps: int, lib: str | None) -> dict:
    problem = _problem(name, scale)
    if kind == "torch":
        import torch

        import torch_steps
        torch.set_num_threads(1)
        step = torch_steps.build(name, problem)
    elif kind == "shrew":
        import shrew_steps
        step = shrew_steps.build(name, problem)
    else:
        assert lib is not None
        c = ctypes.CDLL(lib)
        c.shrew_train_step.restype = ctypes.c_float
        init = lib.rsplit(".", 2)[0] + "_init.safetensors"
        if c.shrew_load_params(init.encode()) != 0:
            raise RuntimeError(f"cannot load {init}")
        x = np.ascontiguousarray(problem.inputs["x"], dtype=np.float32)
        y = np.ascontiguousarray(problem.inputs["y"], dtype=np.int64)
        px, py = x.ctypes.data_as(ctypes.c_void_p), y.ctypes.data_as(ctypes.c_void_p)

        def step() -> float:
            return float(c.shrew_train_step(px, py, len(y)))
    before = _reset_peak()
    ms, losses = _time(step, steps)
    return {"ms": ms, "loss": losses[0], "rss_growth_kib": _status_kib("VmHWM") - before}


def export(name: str, scale: float, folder: str) -> tuple[dict, dict[str, str]]:
    """Trace the workload's step, write and build its C; the memory report and the
    libraries built (plain, and cblas where OpenBLAS is installed)."""
    import shrew
    import shrew_steps
    from shrew import optim
    from shrew.export import trace_training
    from shrew.nn import functional as F

    problem = _problem(name, scale)
    model = shrew_steps.classifier(name, problem)
    model.load_state_dict({k: shrew.tensor(v) for k, v in problem.params.items()})
    opt = optim.SGD(model.parameters(), lr=LEARNING_RATE)
    x, y = (shrew.tensor(problem.inputs[k]) for k in ("x", "y"))
    program = trace_training(model, F.cross_entropy, (x, y), opt)
    libs = {}
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("static_vs_dynamic: needs a C compiler")
    for variant, extra in (("c", []), ("c_cblas", ["-DSHREW_USE_CBLAS", "-lopenblas"])):
        src = program.write_c(os.path.join(folder, f"{name}_{variant}.c"))
        lib = os.path.join(folder, f"{name}_{variant}.c.so")
        built = subprocess.run([cc, *FLAGS, src, "-o", lib, *extra, "-lm"],
                               capture_output=True, text=True)
        if built.returncode == 0:
            libs[variant] = lib
        else:
            print(f"{name}: {variant} not built ({built.stderr.strip()[:200]})")
    return {"nodes": len(program.graph.nodes), **program.memory}, libs


def run_worker(kind: str, name: str, args: argparse.Namespace, lib: str | None) -> dict:
    cmd = [sys.executable, __file__, "--worker", kind, "--workload", name, "--scale",
           str(args.scale), "--steps", str(args.steps)] + (["--lib", lib] if lib else [])
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **ONE_THREAD},
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--worker", default=None)
    parser.add_argument("--workload", default=None)
    parser.add_argument("--lib", default=None)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.workload, args.scale, args.steps, args.lib)))
        return []
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in WORKLOADS:
            memory, libs = export(name, args.scale, folder)
            results = {kind: run_worker(kind, name, args, libs.get(kind))
                       for kind in ("shrew", *libs, "torch")}
            reference = results["shrew"]["loss"]
            for kind, r in results.items():
                if abs(r["loss"] - reference) > 1e-4 * abs(reference):
                    raise SystemExit(f"{name}: {kind}'s first loss {r['loss']} differs from "
                                     f"eager shrew's {reference}")
            rows.append({"workload": name, "memory": memory, "results": results})
    print(table(rows))
    return rows


def table(rows: list[dict]) -> str:
    kinds = ("shrew", "c", "c_cblas", "torch")
    names = {"shrew": "eager shrew", "c": "C (blocked loops)", "c_cblas": "C + cblas",
             "torch": "PyTorch"}
    lines = ["| workload | " + " | ".join(f"{names[k]} ms" for k in kinds) + " | "
             + " | ".join(f"{names[k]} RSS growth MiB" for k in kinds) + " |",
             "|---|" + "---:|" * (2 * len(kinds))]
    for row in rows:
        r = row["results"]
        ms = [f"{r[k]['ms']:.1f}" if k in r else "n/a" for k in kinds]
        rss = [f"{r[k]['rss_growth_kib'] / 1024:.1f}" if k in r else "n/a" for k in kinds]
        lines.append(f"| {row['workload']} | " + " | ".join(ms + rss) + " |")
    lines += ["", "| workload | kernel calls | arena MiB | of it temporaries | temporaries "
              "without reuse | eager shrew peak (tracemalloc) |", "|---|---:|---:|---:|---:|---:|"]
    mib = 1 << 20
    for row in rows:
        m = row["memory"]
        lines.append(f"| {row['workload']} | {m['nodes']} | {m['arena'] / mib:.1f} | "
                     f"{m['temporaries'] / mib:.1f} | {m['temporaries_without_reuse'] / mib:.1f} "
                     f"| {m['eager_peak'] / mib:.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
