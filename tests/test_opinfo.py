"""PyTorch's own OpInfo samples as a regression guard.

Every op_db entry recorded in tests/opinfo/passing.txt passed every sample (values in
float32 and float64, gradients in float64) when it was recorded, and must keep doing so.
`python -m tests.opinfo.report --failures` shows the whole picture; `--write` records the
entries that pass now.
"""
from __future__ import annotations

import pytest

pytest.importorskip("expecttest")  # torch.testing._internal needs it

from tests.opinfo.harness import op_db_entries, run_entry, entry_name  # noqa: E402
from tests.opinfo.report import PASSING  # noqa: E402

RECORDED = [line for line in PASSING.read_text().split() if line]
BY_NAME = {entry_name(op): op for op in op_db_entries()}


def test_recorded_entries_exist():
    assert len(RECORDED) == len(set(RECORDED))
    assert set(RECORDED) <= set(BY_NAME), set(RECORDED) - set(BY_NAME)


@pytest.mark.parametrize("entry", RECORDED)
def test_opinfo_samples_pass(entry):
    result = run_entry(BY_NAME[entry])
    assert result.found, f"{entry}: shrew has no counterpart any more"
    assert result.failed == 0 and result.passed > 0, result.reasons
