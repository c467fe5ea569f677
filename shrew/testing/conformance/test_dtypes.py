"""Every dtype the device declares besides float32: values against the CPU reference."""
from .cases import CASES
from .harness import DEFAULT_LAYOUT, check_forward, over


def test_declares_float32(backend):
    assert any(d.name == "float32" for d in backend.dtypes), \
        f"{backend.device} must declare float32; it declares {sorted(map(str, backend.dtypes))}"


@over("case, index, dtype", lambda t: [
    t.param(c, i, d, dtype=d) for c in CASES for i, s in enumerate(c.samples)
    for d in sorted(t.dtypes - {"float32"}) if t.applies(c, s, d)])
def test_dtypes(device, case, index, dtype):
    check_forward(device, case, case.samples[index], dtype, DEFAULT_LAYOUT)
