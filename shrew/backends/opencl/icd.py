"""Lets pyopencl's ICD loader find OpenCL runtimes that pip installed (Intel's CPU runtime).

pyopencl's wheel bundles ocl-icd, the loader that turns ``clGetPlatformIDs`` into the
platforms of every installed OpenCL runtime ("ICD").  On its first call, and only then, it
reads the ``.icd`` files (each naming one runtime's library) from the directory in
``OCL_ICD_VENDORS``, else ``OPENCL_VENDOR_PATH``, else ``/etc/OpenCL/vendors``, plus
pyopencl's own folder, where ``pocl-binary-distribution`` puts POCL.

``intel-opencl-rt`` installs ``libintelocl.so`` into the environment's ``lib/`` next to its
``tbb`` and ``intel-cmplr-lib-rt`` libraries (found there through its ``$ORIGIN`` run path),
but its ``.icd`` file names a conda placeholder path that pip never rewrites, so the loader
cannot find it.  ``vendors_environment`` writes a vendors directory that names its absolute
path, beside copies of the system's own ``.icd`` files (which the variable would otherwise
hide), and points ``OCL_ICD_VENDORS`` at it for as long as platforms are first listed.  The
loader keeps what it loaded, so the variable is then restored: child processes start clean
and do their own discovery.  A user's own ``OCL_ICD_VENDORS`` or ``OPENCL_VENDOR_PATH``
always wins: shrew then changes nothing.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

USER_VARIABLES = ("OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH")
SYSTEM_VENDORS = Path("/etc/OpenCL/vendors")
# pip distribution -> the runtime library an .icd file must name
PIP_RUNTIMES = {"intel-opencl-rt": "libintelocl.so"}
# The platforms those runtimes report.  They are fallbacks, numbered after the others:
# shrew's kernels are laid out for POCL (long loops per work-item, which it vectorises),
# and Intel's compiler, which vectorises across work-items instead, ran the MLP training
# step about 5x slower than POCL on the same CPU.
FALLBACK_PLATFORMS = frozenset({"Intel(R) OpenCL"})


def pip_runtimes() -> list[Path]:
    """Absolute paths of the OpenCL runtime libraries that pip installed."""
    found = []
    for distribution, library in PIP_RUNTIMES.items():
        try:
            files = metadata.distribution(distribution).files or []
        except metadata.PackageNotFoundError:
            continue
        for file in files:
            if file.name == library:
                path = Path(str(file.locate())).resolve()
                if path.is_file():
                    found.append(path)
    return found


def _write_vendors(directory: Path, runtimes: list[Path], system: Path) -> None:
    """One .icd file per pip runtime, and a copy of each of the system's."""
    for path in runtimes:
        (directory / f"shrew-{path.stem}.icd").write_text(f"{path}\n")
    if system.is_dir():
        for icd in sorted(system.glob("*.icd")):
            with contextlib.suppress(OSError):  # an unreadable one the loader would skip too
                (directory / icd.name).write_text(icd.read_text())


@contextlib.contextmanager
def vendors_environment(system: Path = SYSTEM_VENDORS) -> Iterator[list[Path]]:
    """Within it, the ICD loader also finds the pip-installed runtimes (yields their paths).

    Enter it around the process's first listing of OpenCL platforms; it does nothing when
    the user set the loader's variables or pip installed no runtime."""
    runtimes = pip_runtimes()
    if not runtimes or any(os.environ.get(name) for name in USER_VARIABLES):
        yield []
        return
    previous = os.environ.get("OCL_ICD_VENDORS")  # None, or set but empty (= unset)
    with tempfile.TemporaryDirectory(prefix="shrew-opencl-vendors-") as directory:
        _write_vendors(Path(directory), runtimes, system)
        os.environ["OCL_ICD_VENDORS"] = directory
        try:
            yield runtimes
        finally:
            if previous is None:
                del os.environ["OCL_ICD_VENDORS"]
            else:
                os.environ["OCL_ICD_VENDORS"] = previous
