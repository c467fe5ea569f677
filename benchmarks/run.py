"""The shrew benchmark suite: shrew beside PyTorch (CPU) and, on OpenCL, beside tinygrad.

    python benchmarks/run.py [--rounds 15] [--cl-rounds 5] [--only mlp_step,memory]
                             [--quick] [--no-opencl] [--opencl-device opencl:1] [--cuda]
                             [--no-cpu]
                             [--no-amp] [--compiled] [--scale 1.0] [--out benchmarks/results]

Each (framework, device) runs in its own worker process (worker.py), all built from the
same numpy weights and data.  Before timing, the first two losses of every worker must
agree with PyTorch's (rtol 1e-3): the same forward pass, and after one SGD update the same
gradients.  Then the workers take turns round by round, so machine noise hits all alike;
a round times `repeat` steps of each.  Reported: the median seconds per step, and ratios
shrew/torch (cpu), opencl/cpu (shrew's two backends) and opencl/tinygrad; with --cuda also
shrew and PyTorch on the GPU and their ratio (each step ends in loss.item(), a sync), with
their autocast lanes and, with --compiled, shrew.compile on cuda; --no-cpu leaves out the
cpu lanes.  The autocast lanes train mlp_step, cnn_step and transformer_step under bfloat16
autocast, shrew's beside PyTorch's on the same device in the same run (their first losses must agree
within bfloat16's tolerance, 2e-2).  With --compiled also shrew.compile'd steps (cpu and
OpenCL) beside PyTorch's torch.compile'd ones (inductor), the loss read outside the
compiled step.  `memory` runs transformer_step in fresh workers and reports their peak RSS:
float32, under bfloat16 autocast, and compiled.  Results go to OUT/results.md
and OUT/results.png.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import workloads  # noqa: E402

RTOL = 1e-3
# Some machines pin OpenBLAS to a core type or cache size; the workers run with its own
# choice.  Only their environment changes, not this process's nor the caller's.
# A pause before each timed turn: the threads of the worker that ran last spin on after
# its work (OpenBLAS for up to ~0.1 s after a GEMM, OpenMP likewise) and would otherwise
# take a core from the next worker, charging one framework for the other's idle threads.
SETTLE_S = 0.3

WORKER_ENV = {k: v for k, v in os.environ.items()
              if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
# Timed columns: (lane key, heading); ratios: (heading, numerator lane, denominator lane).
LANES = [("shrew", "shrew cpu"), ("torch", "torch"), ("opencl", "shrew opencl"),
         ("tinygrad", "tinygrad CL"), ("cuda", "shrew cuda"), ("torch_cuda", "torch cuda"),
         ("shrew_amp", "shrew cpu bf16 autocast"), ("torch_amp", "torch bf16 autocast"),
         ("compiled", "shrew.compile cpu"), ("torch_compiled", "torch.compile"),
         ("opencl_compiled", "shrew.compile opencl"), ("cuda_compiled", "shrew.compile cuda"),
         ("cuda_amp", "shrew cuda bf16 autocast"),
         ("torch_cuda_amp", "torch cuda bf16 autocast")]
RATIOS = [("shrew/torch", "shrew", "torch"), ("opencl/cpu", "opencl", "shrew"),
          ("opencl/tinygrad", "opencl", "tinygrad"), ("cuda/torch cuda", "cuda", "torch_cuda"),
          ("bf16 shrew/torch", "shrew_amp", "torch_amp"),
          ("compiled/torch", "compiled", "torch"),
          ("compiled/torch.compile", "compiled", "torch_compiled"),
          ("compiled/eager", "compiled", "shrew"),
          ("opencl compiled/eager", "opencl_compiled", "opencl"),
          ("cuda compiled/torch cuda", "cuda_compiled", "torch_cuda"),
          ("cuda compiled/eager", "cuda_compiled", "cuda"),
          ("cuda bf16 shrew/torch", "cuda_amp", "torch_cuda_amp")]
# The workloads with an autocast lane, and how close the first losses of shrew's and
# PyTorch's bfloat16 runs must be (each rounds its products to bfloat16 its own way).
AMP_WORKLOADS = ("mlp_step", "cnn_step", "transformer_step")
AMP_RTOL = 2e-2


class WorkerError(RuntimeError):
    pass


class Worker:
    """A worker.py process; its stderr goes to a temporary file, quoted if it fails."""

    def __init__(self, framework, device, workload, scale, warmup=3, checkpoint=False,
                 env=WORKER_ENV, amp=False):
        self.log = tempfile.TemporaryFile("w+")
        command = [sys.executable, str(HERE / "worker.py"), framework, device, workload,
                   "--scale", str(scale), "--warmup", str(warmup)]
        if checkpoint:
            command.append("--checkpoint")
        if amp:
            command += ["--amp", "bf16"]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=env)
        try:
            self.hello = self._read()
        except WorkerError:
            self.close()
            raise

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait()
            self.log.seek(0)
            tail = self.log.read().strip().splitlines()[-5:]
            raise WorkerError(f"exited with status {self.proc.returncode}: " + " | ".join(tail))
        message = json.loads(line)
        if "error" in message:
            raise WorkerError(message["error"])
        return message

    def ask(self, command: str) -> dict:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()
        self.log.close()


@dataclass
class Lane:
    key: str
    framework: str
    device: str
    rounds: int
    repeat: int
    env: dict = field(default_factory=lambda: WORKER_ENV)
    amp: bool = False  # under bfloat16 autocast
    worker: Worker | None = None
    samples: list = field(default_factory=list)


@dataclass
class Report:
    """What a run finds besides timings: each worker's description of itself, problems
    (a worker that failed or disagreed: the exit status is 1) and notes (tinygrad could not
    run here, which is no fault of shrew's)."""
    about: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.problems.append(text)
        print(f"  PROBLEM: {text}", flush=True)

    def note(self, text: str) -> None:
        self.notes.append(text)
        print(f"  note: {text}", flush=True)


def opencl_description(device: str) -> str | None:
    """Which OpenCL platform and device shrew's `device` ("opencl" is opencl:0) is, or None
    where it is not a working device here (`python -m shrew.backends.opencl` lists them)."""
    try:
        from shrew.backends.opencl import describe
        found = describe()
    except Exception:  # no pyopencl, or no platform: both mean no OpenCL here
        return None
    name = device if ":" in device else f"{device}:0"
    for info in found:
        if info.device == name:
            return (f"{info.device} = {info.title()}, "
                    f"{info.cl_device.max_compute_units} compute units")
    return None


def cuda_description() -> str:
    """shrew's CUDA device, or why there is none (the cuda lanes then fail, as problems)."""
    from shrew.backends.registry import get_backend
    try:
        return repr(get_backend("cuda"))
    except Exception as exc:  # a DeviceError that says why
        return f"unusable: {exc}"


def tinygrad_setup() -> tuple:
    """(environment for a tinygrad worker on its CL device, None) or (None, why not).

    tinygrad loads libOpenCL through ctypes.  pyopencl's wheel bundles an ICD loader
    (libOpenCL-<hash>.so, which finds its ICD files through PYOPENCL_HOME) and POCL's ICD,
    whose library the .icd file names without a path; tinygrad finds the loader through
    OPENCL_PATH and the loader finds POCL through LD_LIBRARY_PATH.  Without pyopencl the
    system's libOpenCL is left to tinygrad."""
    if importlib.util.find_spec("tinygrad") is None:
        return None, "tinygrad is not installed (pip install 'tinygrad==0.14.*')"
    env = dict(WORKER_ENV, DEV="CL")
    spec = importlib.util.find_spec("pyopencl")
    if spec is not None:
        package = Path(spec.submodule_search_locations[0])
        loaders = sorted((package / ".libs").glob("libOpenCL*.so*"))
        if loaders:
            libraries = [str(package / ".libs"), env.get("LD_LIBRARY_PATH", "")]
            env.update(OPENCL_PATH=str(loaders[0]), PYOPENCL_HOME=str(package),
                       LD_LIBRARY_PATH=os.pathsep.join(filter(None, libraries)))
    return env, None


def cpu_fields() -> dict:
    """The first processor's fields in /proc/cpuinfo (empty where there is none)."""
    fields: dict = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


def cpu_model() -> str:
    """The CPU's name, vendor, family and model (which decide the libraries' code paths
    as much as the name does: AMD's Zen generations share names), its widest vector
    extensions, and the core count."""
    fields = cpu_fields()
    name = fields.get("model name") or platform.processor() or "unknown"
    flags = set(fields.get("flags", "").split())
    vectors = [f for f in ("avx512f", "avx512_bf16", "amx_tile", "avx2") if f in flags]
    about = ", ".join(filter(None, [fields.get("vendor_id"),
                                    fields.get("cpu family") and
                                    f"family {fields['cpu family']} model {fields.get('model')}",
                                    " ".join(vectors)]))
    return f"{name} ({about}) x {os.cpu_count()} cores" if about else \
        f"{name} x {os.cpu_count()} cores"


# One product and one convolution with the libraries' verbose modes on, in a fresh process
# per framework: the first lines MKL and oneDNN print name the code path each chose for
# this CPU (MKL: "... Intel(R) AVX-512 enabled processors", or its generic "Intel(R)
# Architecture processors"; oneDNN: the ISA it dispatches to; PyTorch's ATen: the
# capability its own vectorized kernels were picked for).  They print on stdout, so
# not inside a worker, whose stdout is run.py's protocol.
_PROBE = {
    "shrew": ("import shrew; a = shrew.randn(64, 64); (a @ a).sum().item(); "
              "shrew.nn.functional.conv2d(shrew.randn(1, 3, 16, 16), shrew.randn(4, 3, 3, 3))"
              ".sum().item()"),
    "torch": ("import torch; a = torch.randn(64, 64); (a @ a).sum().item(); "
              "torch.nn.LSTM(8, 8)(torch.randn(3, 2, 8))[0].sum().item(); "
              "print('ATen:', torch.backends.cpu.get_cpu_capability())"),
}


def code_paths(framework: str) -> str:
    """The code paths MKL and oneDNN take under `framework` here, from their verbose
    output; or why they could not be found."""
    env = dict(WORKER_ENV, MKL_VERBOSE="1", ONEDNN_VERBOSE="1")
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE[framework]], env=env,
                             capture_output=True, text=True, timeout=120).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    found = []
    for line in out.splitlines():
        if line.startswith("MKL_VERBOSE oneMKL") or line.startswith("MKL_VERBOSE Intel"):
            found.append("MKL: " + line.removeprefix("MKL_VERBOSE ").strip())
        elif ",info,cpu,isa:" in line:
            found.append("oneDNN: " + line.split(",info,cpu,isa:", 1)[1].strip())
        elif line.startswith("ATen:"):  # PyTorch's own vectorized kernels
            found.append(line)
        elif ",info,oneDNN v" in line:
            found.append(line.split(",info,", 1)[1].split(" (")[0].strip())
    return "; ".join(dict.fromkeys(found)) or "neither MKL nor oneDNN ran"


def f32_products() -> str:
    """Which library runs shrew's large float32 products here (backends/cpu/vendor.py)."""
    from shrew.backends.cpu import vendor
    library = "oneDNN" if vendor.f32_products_on_onednn else "MKL"
    return f"{library} (CPU vendor {vendor.vendor() or 'unknown'})"


def shrew_source() -> str:
    """The shrew under test: version, folder, and its git commit where it has one."""
    import shrew
    folder = Path(shrew.__file__).parent
    where = f"shrew {shrew.version.release} from {folder}"

    def git(*words):
        return subprocess.run(["git", "-C", str(folder), *words], capture_output=True,
                              text=True, check=True).stdout.strip()
    try:
        commit, changed = git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", ".")
    except (OSError, subprocess.CalledProcessError):
        return where
    return f"{where}, commit {commit}" + (" with uncommitted changes in it" if changed else "")


def thread_settings() -> str:
    """The workers' environment variables that steer OpenMP, OpenBLAS or MKL threads."""
    return ", ".join(f"{k}={v}" for k, v in sorted(WORKER_ENV.items())
                     if k.startswith(("OMP_", "GOMP_", "OPENBLAS_", "MKL_"))) or "none set"


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1 / 5 / 15 min)"


def check_losses(name: str, lanes: list, report: Report) -> list:
    """Lanes whose first losses agree with the reference (torch, else shrew cpu; for the
    autocast lanes torch's autocast lane, else shrew's, within AMP_RTOL; without the cpu
    lanes, the same on cuda); the others are reported as problems and left out."""
    kept = []
    for group, keys, rtol in ((False, ("torch", "shrew", "torch_cuda", "cuda"), RTOL),
                              (True, ("torch_amp", "shrew_amp", "torch_cuda_amp", "cuda_amp"),
                               AMP_RTOL)):
        members = [lane for lane in lanes if lane.amp == group]
        if members:
            kept += _agreeing(name, members, keys, rtol, report)
    return kept


def _agreeing(name: str, lanes: list, keys: tuple, rtol: float, report: Report) -> list:
    reference = next((lane for key in keys for lane in lanes if lane.key == key), lanes[0])
    expected = reference.worker.hello["losses"]
    kept = []
    for lane in lanes:
        got = lane.worker.hello["losses"]
        n = min(len(got), len(expected))
        if np.allclose(got[:n], expected[:n], rtol=rtol, atol=1e-6):
            kept.append(lane)
        else:
            report.problem(f"{name}: {lane.framework} {lane.device} losses {got[:n]} differ "
                           f"from {reference.framework}'s {expected[:n]}; not timed")
            lane.worker.close()
    return kept


def bench(workload, lanes: list, scale: float, report: Report) -> dict:
    """Lane key -> its samples (seconds per step) for each lane that starts and agrees."""
    print(f"{workload.name}: {workload.description}", flush=True)
    started = []
    for lane in lanes:  # one at a time, so that no warm-up competes with another
        try:
            lane.worker = Worker(lane.framework, lane.device, workload.name, scale,
                                 warmup=1 if workload.once else 3, env=lane.env, amp=lane.amp)
        except WorkerError as exc:
            what = f"{lane.framework} {lane.device}" + (" bf16 autocast" if lane.amp else "")
            text = f"{workload.name}: {what} failed: {exc}"
            # not shrew's fault
            if lane.framework == "tinygrad" or lane.key.startswith("torch_cuda"):
                report.note(text)
            else:
                report.problem(text)
            continue
        key = f"{lane.framework} {lane.device}" + (" bf16 autocast" if lane.amp else "")
        if key not in report.about:
            report.about[key] = lane.worker.hello["about"]
            print(f"  ({key}: {report.about[key]})", flush=True)
        started.append(lane)
    lanes = check_losses(workload.name, started, report) if started else []
    for r in range(max((lane.rounds for lane in lanes), default=0)):
        for lane in lanes[::-1] if r % 2 else lanes:  # alternate the order round by round
            if r < lane.rounds:
                time.sleep(SETTLE_S)
                lane.samples.append(lane.worker.ask(f"time {lane.repeat}")["seconds"])
    samples = {}
    for lane in lanes:
        lane.worker.close()
        if workload.once:
            lane.samples = [lane.worker.hello["first_s"]]
        samples[lane.key] = lane.samples
        median, best = statistics.median(lane.samples) * 1e3, min(lane.samples) * 1e3
        label = f"{lane.device} bf16" if lane.amp else lane.device
        print(f"  {lane.framework:>8} {label:<13} {median:10.2f} ms/step, best {best:.2f}"
              f"  ({len(lane.samples)} x {lane.repeat} steps, first loss "
              f"{lane.worker.hello['losses'][0]:.6g})", flush=True)
    for heading, ratio in ratios(samples, statistics.median).items():
        print(f"  {heading}: {ratio:.2f}x (best: {ratios(samples, min)[heading]:.2f}x)",
              flush=True)
    return samples


def ratios(samples: dict, summary) -> dict:
    """Heading -> ratio of the two lanes' summaries (median or min), where both ran."""
    return {heading: summary(samples[a]) / summary(samples[b]) for heading, a, b in RATIOS
            if a in samples and b in samples}


MEMORY_ROWS = (("torch", "torch", False, False), ("shrew", "shrew", False, False),
               ("shrew, checkpointed blocks", "shrew", True, False),
               ("torch, bf16 autocast", "torch", False, True),
               ("shrew, bf16 autocast", "shrew", False, True),
               ("shrew, compiled", "shrew-compiled", False, False))
"""(label, framework, checkpointed, bf16 autocast) on the cpu; the OpenCL device's rows
(its buffers are host memory on a CPU device, so RSS counts them) follow."""
OPENCL_MEMORY_ROWS = (("shrew, opencl", "shrew"), ("shrew, opencl, compiled", "shrew-compiled"))


MEMORY_STEPS = 6
"""Steps before the peak RSS is read: a compiled step is captured twice, its memory
recorded over two replays, and its arena serves from the fifth."""


def memory(scale: float, report: Report, opencl: str | None) -> dict:
    """label -> (RSS after building the model, peak RSS after MEMORY_STEPS steps, RSS then,
    the traced peak of one more cpu step or None, the compiled step's arenas in MiB or
    None) of transformer_step, each in a fresh worker: MEMORY_ROWS, then
    OPENCL_MEMORY_ROWS on the device `opencl` where there is one.  The losses must agree
    with torch's (its autocast run's, within AMP_RTOL, for the autocast rows; the OpenCL
    rows' within RTOL), as in the timing runs."""
    print(f"memory: peak RSS of transformer_step workers ({MEMORY_STEPS} steps each)",
          flush=True)
    rows, losses = {}, {}
    wanted = [(label, framework, "cpu", checkpoint, amp)
              for label, framework, checkpoint, amp in MEMORY_ROWS]
    if opencl:
        wanted += [(label, framework, opencl, False, False)
                   for label, framework in OPENCL_MEMORY_ROWS]
    for label, framework, device, checkpoint, amp in wanted:
        try:
            worker = Worker(framework, device, "transformer_step", scale, warmup=MEMORY_STEPS,
                            checkpoint=checkpoint, amp=amp)
        except WorkerError as exc:
            report.problem(f"memory: {label} failed: {exc}")
            continue
        rss = worker.ask("rss")
        peak, now = rss["peak_rss_mib"], rss["rss_mib"]
        # One more step's traced peak: numpy's buffers, so shrew's alone on the cpu (torch's
        # allocator is not traced), the figure issue 32's bf16 memory goal is stated in.
        traced = worker.ask("traced")["traced_peak_mib"] \
            if framework.startswith("shrew") and device == "cpu" else None
        arena = worker.ask("arena")["arena_mib"] if framework == "shrew-compiled" else None
        worker.close()
        losses[label] = worker.hello["losses"]
        reference, rtol = ("torch, bf16 autocast", AMP_RTOL) if amp else ("torch", RTOL)
        if reference in losses and not np.allclose(losses[label], losses[reference], rtol=rtol):
            report.problem(f"memory: {label} losses {losses[label]} differ from {reference}'s "
                           f"{losses[reference]}")
        rows[label] = (worker.hello["build_rss_mib"], peak, now, traced, arena)
        print(f"  {label:<28} peak RSS {peak:8.1f} MiB (after building: "
              f"{worker.hello['build_rss_mib']:.1f} MiB, at the end: {now:.1f} MiB)"
              + ("" if traced is None else f"; one step traced: {traced:.1f} MiB")
              + ("" if arena is None else f"; arena: {arena:.1f} MiB"), flush=True)
    return rows


def markdown(header: list, names: list, results: dict, rss: dict, report: Report) -> str:
    lines = ["# shrew benchmark results", ""] + [f"- {h}" for h in header] + [""]
    # Only the lanes that ran somewhere (no cuda columns without --cuda, say).
    ran = {k for name in names for k in results[name]}
    lanes = [(k, h) for k, h in LANES if k in ran]
    shown = [r for r in RATIOS if r[1] in ran and r[2] in ran]
    headings = [h for _, h in lanes] + [h for h, _, _ in shown]
    lines += [("Median milliseconds per step (lower is better) and their ratios (below 1: "
               "shrew faster); the last columns are the ratios of the best samples instead, "
               "the least disturbed by other load."), "",
              "| workload | " + " | ".join(headings) + " | best: " +
              " | best: ".join(h for h, _, _ in shown) + " |",
              "|---|" + "---:|" * (len(headings) + len(shown))]
    for name in names:
        samples = results[name]
        cells = [f"{statistics.median(samples[k]) * 1e3:.2f}" if k in samples else "-"
                 for k, _ in lanes]
        for summary in (statistics.median, min):
            found = ratios(samples, summary)
            cells += [f"{found[h]:.2f}x" if h in found else "-" for h, _, _ in shown]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if rss:
        torch_peak = rss.get("torch", (0, 0))[1]
        lines += ["", ("Peak RSS of a fresh worker process running transformer_step "
                       f"({MEMORY_STEPS} steps; absolute, nothing subtracted), and its RSS "
                       "after them: a compiled step's peak comes in its captures, which "
                       "run eagerly; its later replays hold what the end shows."), "",
                  "| worker | after building (MiB) | peak (MiB) | peak / torch "
                  "| at the end (MiB) | one step traced (MiB) | arena (MiB) |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for label, (built, peak, now, traced, arena) in rss.items():
            ratio = f"{peak / torch_peak:.2f}x" if torch_peak else "-"
            step = "-" if traced is None else f"{traced:.1f}"
            planned = "-" if arena is None else f"{arena:.1f}"
            lines.append(f"| {label} | {built:.1f} | {peak:.1f} | {ratio} | {now:.1f} "
                         f"| {step} | {planned} |")
        plain, amp = rss.get("shrew", (0, 0, 0, None, None))[3], \
            rss.get("shrew, bf16 autocast", (0, 0, 0, None, None))[3]
        if plain and amp:
            lines += ["", f"shrew's one-step traced peak, bf16 autocast / float32: "
                          f"{amp / plain:.2f}x (issue 32's goal: 0.65x)."]
    for heading, items in (("Problems", report.problems), ("Notes", report.notes)):
        if items:
            lines += ["", f"{heading}:", ""] + [f"- {p}" for p in items]
    return "\n".join(lines) + "\n"


def chart(path: Path, names: list, results: dict, rss: dict, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    groups = {name: ratios(results[name], statistics.median) for name in names}
    if "shrew" in rss and "torch" in rss:
        groups["transformer\npeak RSS"] = {"shrew/torch": rss["shrew"][1] / rss["torch"][1]}
    groups = {k: v for k, v in groups.items() if v}
    width = 0.8 / len(RATIOS)
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for i, (heading, _, _) in enumerate(RATIOS):
        xs, ys = [], []
        for g, found in enumerate(groups.values()):
            if heading in found:  # centre the bars a group has
                present = [h for h, _, _ in RATIOS if h in found]
                xs.append(g + (present.index(heading) - (len(present) - 1) / 2) * width)
                ys.append(found[heading])
        bars = ax.bar(xs, ys, width, label=heading, color=f"C{i}")
        ax.bar_label(bars, [f"{y:.2f}" for y in ys], fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    everything = [r for found in groups.values() for r in found.values()] + [1.0]
    ax.set_ylim(min(everything) / 1.5, max(everything) * 1.5)
    ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1, 2, 5)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(range(len(groups)), list(groups), fontsize=8)
    ax.set_ylabel("ratio (below 1: shrew faster / smaller)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed rounds on the CPU")
    parser.add_argument("--cl-rounds", type=int, default=5, help="timed rounds on OpenCL")
    parser.add_argument("--only", default="",
                        help="comma-separated workloads (" + ", ".join(workloads.WORKLOADS) +
                             ") and/or memory")
    parser.add_argument("--quick", action="store_true",
                        help="a fast pass: 3 CPU rounds, 1 OpenCL round, no deep_chain_1m")
    parser.add_argument("--no-opencl", action="store_true", help="skip the OpenCL lanes")
    parser.add_argument("--no-cpu", action="store_true",
                        help="skip the cpu lanes (with --cuda: the GPU lanes alone)")
    parser.add_argument("--opencl-device", default="opencl", metavar="opencl:N",
                        help="the OpenCL device (platform) the opencl lane measures; "
                             "`python -m shrew.backends.opencl` lists them (default: opencl, "
                             "the first working one)")
    parser.add_argument("--cuda", action="store_true",
                        help="also time shrew and PyTorch on the GPU (needs CuPy and a PyTorch "
                             "built for CUDA)")
    parser.add_argument("--no-amp", action="store_true",
                        help="skip the bfloat16 autocast lanes")
    parser.add_argument("--compiled", action="store_true",
                        help="also time shrew.compile'd steps (cpu, and OpenCL where it runs) "
                             "and torch.compile'd ones (inductor: slow to compile)")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="shrink the workloads (smoke tests); 1 is the benchmark")
    parser.add_argument("--out", default=str(HERE / "results"),
                        help="folder for results.md and results.png ('' writes nothing)")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.cl_rounds = min(args.rounds, 3), min(args.cl_rounds, 1)
    wanted = set(filter(None, args.only.split(",")))
    unknown = wanted - set(workloads.WORKLOADS) - {"memory"}
    if unknown:
        parser.error(f"unknown workloads: {', '.join(sorted(unknown))}")
    names = [n for n in workloads.WORKLOADS
             if (n in wanted if wanted else not (args.quick and workloads.WORKLOADS[n].once))]

    started = time.perf_counter()
    cl = None if args.no_opencl else opencl_description(args.opencl_device)
    cl_line = "skipped (--no-opencl)" if args.no_opencl else \
        cl or f"no working OpenCL device {args.opencl_device}"
    tinygrad_env, tinygrad_absent = tinygrad_setup()
    stamp = time.strftime("%Y-%m-%d %H:%M")
    header = [f"{stamp}, `{' '.join(['run.py'] + sys.argv[1:])}`",
              f"CPU: {cpu_model()}; load average at start {load_average()}",
              shrew_source(),
              f"Python {platform.python_version()}, numpy {np.__version__}; thread settings: "
              f"{thread_settings()}",
              f"shrew's libraries: {code_paths('shrew')}; float32 products: "
              f"{f32_products()}",
              f"PyTorch's libraries: {code_paths('torch')}",
              f"OpenCL: {cl_line}",
              f"tinygrad: {tinygrad_absent or 'DEV=CL in its own worker, steps in TinyJit'}"]
    if args.cuda:
        header.append(f"CUDA: {cuda_description()}")
    print("\n".join(header), flush=True)

    report, results = Report(), {}
    for name in names:
        w = workloads.WORKLOADS[name]
        cpu = not args.no_cpu
        lanes = [Lane("shrew", "shrew", "cpu", args.rounds, w.repeat),
                 Lane("torch", "torch", "cpu", args.rounds, w.repeat)] if cpu else []
        # OpenCL eager: the training steps, and the chains too for compiled/eager
        if cl and (w.training or (args.compiled and not w.once)):
            lanes.append(Lane("opencl", "shrew", args.opencl_device, args.cl_rounds, 1))
            if tinygrad_env and w.tinygrad:
                lanes.append(Lane("tinygrad", "tinygrad", "CL", args.cl_rounds, 1, tinygrad_env))
        compiled = args.compiled and not w.once
        if compiled and cpu:
            lanes.append(Lane("compiled", "shrew-compiled", "cpu", args.rounds, w.repeat))
            # inductor did not finish compiling deep_chain's 20,000 ops in an hour
            if name != "deep_chain":
                lanes.append(Lane("torch_compiled", "torch-compiled", "cpu", args.rounds,
                                  w.repeat))
        if compiled and cl:
            lanes.append(Lane("opencl_compiled", "shrew-compiled", args.opencl_device,
                              args.cl_rounds, 1))
        amp = name in AMP_WORKLOADS and not args.no_amp
        if args.cuda:
            lanes += [Lane("cuda", "shrew", "cuda", args.rounds, w.repeat),
                      Lane("torch_cuda", "torch", "cuda", args.rounds, w.repeat)]
            if compiled:
                lanes.append(Lane("cuda_compiled", "shrew-compiled", "cuda", args.rounds,
                                  w.repeat))
            if amp:
                lanes += [Lane("cuda_amp", "shrew", "cuda", args.rounds, w.repeat, amp=True),
                          Lane("torch_cuda_amp", "torch", "cuda", args.rounds, w.repeat,
                               amp=True)]
        if amp and cpu:
            lanes += [Lane("shrew_amp", "shrew", "cpu", args.rounds, w.repeat, amp=True),
                      Lane("torch_amp", "torch", "cpu", args.rounds, w.repeat, amp=True)]
        results[name] = bench(w, lanes, args.scale, report)
    rss = memory(args.scale, report, args.opencl_device if cl else None) \
        if not wanted or "memory" in wanted else {}

    minutes = (time.perf_counter() - started) / 60
    header[1] += f", at the end {load_average()}"
    header += [f"{k}: {v}" for k, v in report.about.items()]
    header.append(f"the whole run took {minutes:.1f} minutes")
    print(f"load average at the end {load_average()}; the run took {minutes:.1f} minutes")
    for p in report.problems:
        print(f"PROBLEM: {p}")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.md").write_text(markdown(header, names, results, rss, report))
        chart(out / "results.png", names, results, rss,
              f"shrew ratios, {stamp}, {cpu_model()}")
        print(f"wrote {out / 'results.md'} and {out / 'results.png'}")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
