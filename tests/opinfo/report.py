"""Print how shrew fares on PyTorch's OpInfo samples; `--write` records the entries that pass.

    python -m tests.opinfo.report [--write] [--failures]

The recorded list (tests/opinfo/passing.txt) is what tests/test_opinfo.py guards: every
entry in it must keep passing every sample.
"""
from __future__ import annotations

import argparse
import collections
import pathlib

from tests.opinfo.harness import run_all

PASSING = pathlib.Path(__file__).with_name("passing.txt")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite passing.txt")
    parser.add_argument("--failures", action="store_true", help="list failing entries")
    args = parser.parse_args()
    results = run_all()
    found = [r for r in results if r.found]
    passing = sorted(r.entry for r in found if r.all_pass)
    samples_ok = sum(r.passed for r in found)
    samples = samples_ok + sum(r.failed for r in found)
    names = {r.entry.split(".")[0] for r in found}
    print(f"op_db entries: {len(results)}; with a shrew counterpart: {len(found)} "
          f"({len(names)} names); passing every sample: {len(passing)}; "
          f"samples passed: {samples_ok} of {samples}")
    if args.failures:
        reasons: collections.Counter[str] = collections.Counter()
        for r in found:
            if not r.all_pass:
                print(f"  {r.entry}: {r.passed} passed, {r.failed} failed; "
                      f"e.g. {r.reasons[:1]}")
                reasons.update(x.split(":")[1].strip().split(" ")[0] for x in r.reasons)
        print("failure kinds:", reasons.most_common(12))
    if args.write:
        PASSING.write_text("\n".join(passing) + "\n")
        print(f"wrote {len(passing)} entries to {PASSING}")


if __name__ == "__main__":
    main()
