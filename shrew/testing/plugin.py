"""pytest plugin of the backend conformance suite: the --shrew-device option and the
report printed at the end of a run that included the suite, one section per device.

    pytest --pyargs shrew.testing.conformance --shrew-device NAME
    pytest --pyargs shrew.testing.conformance --shrew-device opencl:all   # every opencl:N
"""
from __future__ import annotations

from collections import Counter

import pytest

SUITE = "shrew.testing.conformance."
AREAS = ("values", "gradients", "dtypes", "determinism", "errors")
_OUTCOMES = pytest.StashKey[Counter]()
_UNIMPLEMENTED = pytest.StashKey[set]()


def pytest_addoption(parser):
    parser.getgroup("shrew").addoption(
        "--shrew-device", dest="shrew_device", default="cpu", metavar="NAME",
        help="device the shrew conformance suite checks against the CPU (default: cpu); "
             "NAME:all checks every device of NAME that shrew.devices() lists, in one run")


def pytest_configure(config):
    config.stash[_OUTCOMES] = Counter()
    config.stash[_UNIMPLEMENTED] = set()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    module = getattr(getattr(item, "module", None), "__name__", "")
    if not module.startswith(SUITE) or (report.when != "call" and report.passed):
        return report
    area = module[len(SUITE):].removeprefix("test_")
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    device = getattr(item, "callspec", None) and item.callspec.params.get("device")
    item.config.stash[_OUTCOMES][device, area, outcome] += 1
    if call.excinfo is not None:
        missing = _unimplemented_primitive(call.excinfo.value)
        if missing:
            item.config.stash[_UNIMPLEMENTED].add((device, missing))
    return report


def _unimplemented_primitive(exc) -> str | None:
    """The Backend primitive that raised NotImplementedError, found in the traceback."""
    if not isinstance(exc, NotImplementedError):
        return None
    # shrew is imported only once a shrew test runs: pytest loads this plugin (an entry
    # point) in every session of an environment where shrew is installed
    from shrew.backends.base import PRIMITIVES
    tb = exc.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code.co_name in PRIMITIVES and hasattr(frame.f_locals.get("self"), "dtypes"):
            name, fn = frame.f_code.co_name, frame.f_locals.get("fn")
            return f"{name}({fn!r})" if isinstance(fn, str) else name
        tb = tb.tb_next
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    outcomes = config.stash.get(_OUTCOMES, Counter())
    if not outcomes:
        return
    terminalreporter.write_sep("=", "shrew conformance report")
    devices = sorted({device for device, _, _ in outcomes if device is not None})
    for device in devices:
        _report_device(terminalreporter.write_line, device,
                       Counter({(a, o): n for (d, a, o), n in outcomes.items() if d == device}),
                       config.stash[_UNIMPLEMENTED])
    if not devices:  # every case skipped before a device was known
        for (_, area, outcome), n in sorted(outcomes.items()):
            terminalreporter.write_line(f"  {area:<12} {n:>5} cases ({n} {outcome})")


def _report_device(write, device, outcomes, unimplemented) -> None:
    """What ran on one device, per area, and the primitives it lacks."""
    # (imported here for the reason given in _unimplemented_primitive)
    from shrew.backends.base import PRIMITIVES
    from shrew.backends.registry import get_backend
    backend = get_backend(device)
    kind = type(backend)
    description = getattr(backend, "description", None) or f"{kind.__module__}.{kind.__qualname__}"
    write(f"device: {backend.device} ({description})")
    write(f"dtypes: {', '.join(sorted(str(d) for d in backend.dtypes))}")
    for area in AREAS + tuple(sorted({a for a, _ in outcomes} - set(AREAS))):
        counts = {o: n for (a, o), n in sorted(outcomes.items()) if a == area}
        ran = sum(counts.values())
        detail = ", ".join(f"{n} {o}" for o, n in counts.items())
        write(f"  {area:<12} {ran:>5} cases" + (f" ({detail})" if detail else ""))
    absent = [p for p in PRIMITIVES if not callable(getattr(backend, p, None))]
    raised = sorted(r for d, r in unimplemented if d == device)
    write("primitives not implemented: " + (", ".join(absent + [f"{r} (NotImplementedError)"
                                                               for r in raised]) or "none"))
