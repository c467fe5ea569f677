"""Forward values on the device against the CPU float64 reference, from float32 inputs."""
from hypothesis import given
from hypothesis import strategies as st

from .cases import CASES
from .harness import DRAWN, LAYOUTS, check_forward, over


@over("case, index, layout", lambda t: [
    t.param(c, i, layout) for c in CASES for i, s in enumerate(c.samples) if t.applies(c, s)
    for layout in LAYOUTS])
def test_values(device, case, index, layout):
    check_forward(device, case, case.samples[index], "float32", layout)


@over("case", lambda t: [t.param(c) for c in CASES if c.shapes is not None])
@DRAWN
@given(data=st.data())
def test_values_drawn(device, case, data):
    sample = data.draw(case.shapes, label="sample")
    check_forward(device, case, sample, "float32", data.draw(st.sampled_from(LAYOUTS), "layout"))
