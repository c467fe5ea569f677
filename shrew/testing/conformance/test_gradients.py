"""Gradients: backward on the device against the CPU float64 reference, and gradcheck
(finite differences) on the device itself in float64."""
from hypothesis import given
from hypothesis import strategies as st

from .cases import CASES
from .harness import DEFAULT_LAYOUT, DRAWN, check_gradcheck, check_gradients, differentiable, over

GRAD_LAYOUTS = ("transposed", "narrowed")  # "expanded" inputs that need grad are copies


@over("case, index, layout", lambda t: [
    t.param(c, i, layout) for c in CASES if c.grad for i, s in enumerate(c.samples)
    if t.applies(c, s) for layout in GRAD_LAYOUTS])
def test_gradients(device, case, index, layout):
    check_gradients(device, case, case.samples[index], layout)


@over("case", lambda t: [t.param(c) for c in CASES if c.grad and c.shapes is not None])
@DRAWN
@given(data=st.data())
def test_gradients_drawn(device, case, data):
    sample = data.draw(case.shapes, label="sample")
    check_gradients(device, case, sample, data.draw(st.sampled_from(GRAD_LAYOUTS), "layout"))


@over("case, index", lambda t: [
    t.param(c, i, dtype="float64") for c in CASES if c.grad and c.gradcheck
    for i, s in enumerate(c.samples) if t.applies(c, s, "float64") and differentiable(s)])
def test_gradcheck_directions(device, case, index):
    check_gradcheck(device, case, case.samples[index], DEFAULT_LAYOUT, directions=2)


@over("case", lambda t: [t.param(c, dtype="float64") for c in CASES if c.jacobian
                         and t.applies(c, c.samples[0], "float64")])
def test_gradcheck_jacobian(device, case):
    check_gradcheck(device, case, case.samples[0], DEFAULT_LAYOUT, directions=None)
