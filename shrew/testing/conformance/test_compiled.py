"""shrew.compile on the device: every case's call, compiled, gives eager's bits."""
from .cases import CASES
from .harness import DEFAULT_LAYOUT, check_compiled, over


@over("case, index", lambda t: [
    t.param(c, i) for c in CASES for i, s in enumerate(c.samples) if t.applies(c, s)])
def test_compiled(device, case, index):
    check_compiled(device, case, case.samples[index], DEFAULT_LAYOUT)
