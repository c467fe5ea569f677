"""One framework running one workload in its own process, driven by run.py.

    python benchmarks/worker.py FRAMEWORK DEVICE WORKLOAD [--scale S] [--warmup N] [--checkpoint]
                                [--amp bf16]

FRAMEWORK is shrew, torch or tinygrad (whose device comes from the DEV environment
variable), or shrew-compiled / torch-compiled (the step under shrew.compile /
torch.compile).  The worker builds the step, runs N warm-up steps and answers on stdout, one
JSON object per line:
    {"losses": [first N losses], "first_s": seconds of the first step,
     "build_rss_mib": peak RSS before the first step, "about": "versions, BLAS"}
Then it reads commands from stdin: "time K" runs K steps and answers {"seconds": mean
per step}; "rss" answers {"peak_rss_mib": peak RSS so far, "rss_mib": RSS now};
"traced" runs one step under tracemalloc and answers {"traced_peak_mib": its peak over
what was allocated before it} (numpy's buffers: shrew's cpu memory; not torch's
allocator); "arena" answers {"arena_mib": the size of shrew.compile's replay arenas}.
End of input ends it.  A failure answers {"error": "..."} and exits with status 1.
Anything else the frameworks print goes to stderr.  --amp bf16 runs each training
step's forward and loss under autocast(device type, bfloat16) (shrew and torch).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
import tracemalloc
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def peak_rss_mib() -> float:
    """This process's peak resident memory.  Linux's VmHWM belongs to the process image
    and starts afresh at exec; ru_maxrss does not: it keeps the RSS that run.py had when it
    forked this worker, which hid the peak of a worker smaller than run.py (measured: a
    checkpointed transformer_step reported run.py's 183 MiB)."""
    return _status_mib("VmHWM:", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def rss_mib() -> float | None:
    """This process's resident memory now (None where /proc does not say)."""
    return _status_mib("VmRSS:", None)


def _status_mib(field: str, otherwise: float | None) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return otherwise


def blas_info() -> str:
    """The BLAS and OpenMP libraries loaded in this process, as threadpoolctl sees them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    parts = ([i["internal_api"], i.get("version"), i.get("architecture"),
              f"({i['num_threads']} threads)"] for i in threadpool_info())
    return "; ".join(" ".join(filter(None, p)) for p in parts) or "none found"


def build(framework: str, device: str, name: str, problem, checkpoint: bool, amp: bool = False):
    """(step function, a line about the framework)."""
    compiled = framework.endswith("-compiled")
    framework = framework.removesuffix("-compiled")
    if framework == "shrew":
        import numpy as np

        import shrew
        import shrew_steps
        from shrew.backends import cpu
        step = shrew_steps.build(name, problem, device, checkpoint, compiled, amp)
        # Asking loads the libraries, so that blas_info lists MKL even in a workload
        # without a matrix product (tiny_chain is the first the report describes).
        return step, (f"shrew {shrew.version.release} on {device}, numpy {np.__version__}, "
                      f"MKL {cpu.mkl_active()}, oneDNN {cpu.onednn_active()}")
    if framework == "torch":
        import torch
        torch.set_num_threads(2)
        import torch_steps
        backends = torch.backends
        return torch_steps.build(name, problem, device, compiled, amp), (
            f"torch {torch.__version__} on {device}, {torch.get_num_threads()} threads, "
            f"MKL {backends.mkl.is_available()}, oneDNN {backends.mkldnn.is_available()}")
    if framework == "tinygrad":
        from importlib.metadata import version

        from tinygrad import Device

        import tinygrad_steps
        return tinygrad_steps.build(name, problem), (
            f"tinygrad {version('tinygrad')} on {Device.DEFAULT}")
    raise ValueError(f"unknown framework {framework!r}")


def traced_peak_mib(step) -> float:
    """The peak of one step's traced allocations, over what was allocated before it."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        step()
        return (tracemalloc.get_traced_memory()[1] - before) / 2**20
    finally:
        tracemalloc.stop()


def serve(args, reply) -> None:
    problem = workloads.WORKLOADS[args.workload].make(args.scale)
    step, about = build(args.framework, args.device, args.workload, problem, args.checkpoint,
                        amp=args.amp == "bf16")
    build_rss = peak_rss_mib()
    start = time.perf_counter()
    losses = [step()]
    first_s = time.perf_counter() - start
    losses += [step() for _ in range(args.warmup - 1)]
    reply(losses=losses, first_s=first_s, build_rss_mib=build_rss,
          about=f"{about}; {blas_info()}")
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "time":
            count = int(rest[0])
            start = time.perf_counter()
            for _ in range(count):
                step()
            reply(seconds=(time.perf_counter() - start) / count)
        elif command == "rss":
            reply(peak_rss_mib=peak_rss_mib(), rss_mib=rss_mib())
        elif command == "traced":
            reply(traced_peak_mib=traced_peak_mib(step))
        elif command == "arena":
            import shrew.compiler
            reply(arena_mib=shrew.compiler.arena_bytes() / 2**20)
        else:
            raise ValueError(f"unknown command {line.strip()!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("framework")
    parser.add_argument("device")
    parser.add_argument("workload", choices=workloads.WORKLOADS)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--checkpoint", action="store_true")
    parser.add_argument("--amp", choices=("bf16",), default=None,
                        help="train under bfloat16 autocast")
    args = parser.parse_args()

    protocol = sys.stdout
    sys.stdout = sys.stderr  # keep the frameworks' own prints off the protocol

    def reply(**message) -> None:
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    try:
        serve(args, reply)
    except Exception as exc:  # report any failure to run.py, which carries on without us
        traceback.print_exc()
        reply(error=f"{type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
