"""Profile one workload's shrew steps with py-spy, and summarise a profile.

    py-spy record -r 200 --format raw -o prof.txt -- \\
        python benchmarks/profile_step.py run cnn_step --steps 20
    python benchmarks/profile_step.py summarize prof.txt --top 15

`run` builds the workload (benchmarks/workloads.py) with shrew_steps, runs two warm-up
steps, then --steps more: nothing of torch's runs, so the profile is shrew's alone.  It
runs from any checkout that has benchmarks/shrew_steps.py (PYTHONPATH picks which shrew).
`summarize` reads py-spy's raw (collapsed) output and prints the frames with the largest
share of the samples taken inside a step (shrew_steps' `step`, so not the imports and the
set-up): self (the frame on top of the stack) and total (anywhere on it).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys


def run(name: str, steps: int) -> None:
    # The benchmarks folder of the checkout whose shrew is imported: its shrew_steps
    # matches its shrew's API.
    import shrew
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(shrew.__file__)),
                                    "benchmarks"))
    import shrew_steps
    import workloads
    step = shrew_steps.build(name, getattr(workloads, name)())
    for _ in range(2 + steps):
        step()


def _frame(entry: str) -> str:
    """'fn (path/to/module.py:123)' -> 'fn (module.py)': one row per function."""
    fn, _, where = entry.partition(" (")
    return f"{fn} ({os.path.basename(where.rsplit(':', 1)[0].rstrip(')'))})" if where else fn


def summarize(path: str, top: int) -> str:
    self_counts: collections.Counter = collections.Counter()
    total_counts: collections.Counter = collections.Counter()
    samples = 0
    with open(path) as file:
        for line in file:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = [_frame(f) for f in stack.split(";")]
            if not any(f.endswith("step (shrew_steps.py)") for f in frames):
                continue
            samples += int(count)
            self_counts[frames[-1]] += int(count)
            for frame in set(frames):
                total_counts[frame] += int(count)
    rows = ["| frame | self % | total % |", "|---|---:|---:|"]
    for frame, count in self_counts.most_common(top):
        rows.append(f"| `{frame}` | {100 * count / samples:.1f} | "
                    f"{100 * total_counts[frame] / samples:.1f} |")
    return f"{samples} samples\n\n" + "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_args = sub.add_parser("run")
    run_args.add_argument("workload")
    run_args.add_argument("--steps", type=int, default=20)
    summary = sub.add_parser("summarize")
    summary.add_argument("profile")
    summary.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.workload, args.steps)
    else:
        print(summarize(args.profile, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
