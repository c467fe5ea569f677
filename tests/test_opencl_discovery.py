"""OpenCL device discovery: probing, numbering, describe(), the ICD set-up for pip's runtimes,
and a broken platform (its probe fails to build) left out with a clear DeviceError."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import shrew
from shrew.backends import opencl
from shrew.backends.opencl import discovery, icd

cl = pytest.importorskip("pyopencl")
REAL = [info for info in discovery.discover() if info.works]
needs_device = pytest.mark.skipif(not REAL, reason="no working OpenCL device on this machine")
COMPILER_SAYS = "error: <stdin>:1:2: unknown target CPU 'generic'"


class BrokenPlatform:
    name = "Broken Test Platform"


class BrokenDevice:
    """A CPU device of a platform whose compiler rejects everything (as POCL's LLVM 14 does
    on a CPU newer than it): it reports like a real device until a program is built."""

    platform = BrokenPlatform()
    name = "Imaginary CPU"
    version = "OpenCL 3.0"
    driver_version = "0.0"
    type = cl.device_type.CPU
    extensions = "cl_khr_fp64"
    max_work_group_size = 1024
    max_work_item_sizes = [1024, 1024, 1024]
    local_mem_size = 1 << 16
    preferred_vector_width_half = preferred_vector_width_float = 8
    preferred_vector_width_double = preferred_vector_width_int = 8
    preferred_vector_width_long = 4


@pytest.fixture
def broken_platform(monkeypatch, isolated_registry):
    """discover() finds the real devices, then a broken one whose probe build fails."""
    real_devices, real_build = discovery._platform_devices, discovery._build
    broken = BrokenDevice()
    monkeypatch.setattr(discovery, "_platform_devices",
                        lambda cl: real_devices(cl) + [broken])

    def build(cl, cl_device):
        if cl_device is broken:
            raise cl.RuntimeError(
                "clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed\n\n"
                f"Build on <pyopencl.Device 'Imaginary CPU'>:\n\n{COMPILER_SAYS}\n"
                "Device Imaginary CPU failed to build the program\n\n(options: -I /x)")
        return real_build(cl, cl_device)

    monkeypatch.setattr(discovery, "_build", build)
    discovery.forget()
    yield broken
    discovery.forget()


def test_a_broken_platform_is_left_out_with_the_compilers_message(broken_platform):
    found = opencl.describe()
    assert [info.device for info in found if info.works] == \
        [f"opencl:{i}" for i in range(len(REAL))]
    left_out = found[-1]
    assert (left_out.platform, left_out.name, left_out.device) == \
        ("Broken Test Platform", "Imaginary CPU", None)
    assert "unknown target CPU 'generic'" in left_out.error
    assert "options" not in left_out.error  # pyopencl's wrapping is cut, the log kept
    assert shrew.devices().count(f"opencl:{len(REAL)}") == 0
    assert [d for d in shrew.devices() if d.startswith("opencl")] == \
        [info.device for info in REAL]


def test_asking_for_a_broken_device_is_a_clean_device_error(broken_platform):
    with pytest.raises(shrew.DeviceError) as error:
        shrew.zeros(2, device=f"opencl:{len(REAL)}")
    message = str(error.value)
    for words in ("Broken Test Platform", "Imaginary CPU", "unknown target CPU 'generic'",
                  "pip install 'shrew[opencl]'", f"{len(REAL)} working OpenCL device"):
        assert words in message
    # The default device is the first that works, never the broken one.
    if REAL:
        ones = shrew.ones(3, device="opencl")
        assert ones.device == REAL[0].device == "opencl:0"
        assert ones.numpy().tolist() == [1.0, 1.0, 1.0]
    else:
        with pytest.raises(shrew.DeviceError, match="Broken Test Platform"):
            shrew.ones(3, device="opencl")


@needs_device
def test_describe_reads_each_device():
    for info in REAL:
        device = info.cl_device
        assert info.platform == device.platform.name.strip()
        assert info.float64 == ("cl_khr_fp64" in device.extensions.split())
        assert info.float16 == ("cl_khr_fp16" in device.extensions.split())
        assert info.max_work_group_size == device.max_work_group_size
        assert info.preferred_vector_width["float"] == device.preferred_vector_width_float
        assert info.device in info.line() and info.platform in info.line()


@needs_device
def test_each_working_device_declares_what_it_supports():
    for info in REAL:
        backend = opencl.factory(int(info.device.split(":")[1]))
        assert backend.description == info.title()
        assert (backend.dtypes >= {np.dtype("float64")}) == info.float64
        assert (np.dtype("float16") in backend.dtypes) == info.float16
        assert backend.wg <= info.max_work_group_size and backend.wg & (backend.wg - 1) == 0


def test_the_order_is_stable_gpus_first_fallbacks_last_then_by_platform_name():
    class Kind:
        GPU, CPU, ACCELERATOR = 4, 2, 8

    class Fake:
        device_type = Kind

        class Error(Exception):
            pass

        def __init__(self, platforms):
            self.platforms = platforms

        def get_platforms(self):
            return self.platforms

    class Platform:
        def __init__(self, name, kinds):
            self.name = name
            self.devices = [type("D", (), {"type": k, "tag": f"{name}{i}"})()
                            for i, k in enumerate(kinds)]

        def get_devices(self):
            return self.devices

    pocl, intel, gpu, other = (Platform("Portable Computing Language", [Kind.CPU]),
                               Platform("Intel(R) OpenCL", [Kind.CPU]),
                               Platform("NVIDIA CUDA", [Kind.GPU, Kind.GPU]),
                               Platform("Another CPU Runtime", [Kind.CPU]))
    assert "Intel(R) OpenCL" in icd.FALLBACK_PLATFORMS
    for order in ([pocl, intel, gpu, other], [gpu, intel, other, pocl]):
        tags = [d.tag for d in discovery._platform_devices(Fake(order))]
        assert tags == ["NVIDIA CUDA0", "NVIDIA CUDA1", "Another CPU Runtime0",
                        "Portable Computing Language0", "Intel(R) OpenCL0"]


# -- the ICD loader set-up ------------------------------------------------------------------
def test_vendors_directory_names_pip_runtimes_and_keeps_the_systems(monkeypatch, tmp_path):
    library = tmp_path / "lib" / "libintelocl.so"
    library.parent.mkdir()
    library.write_bytes(b"")
    system = tmp_path / "vendors"
    system.mkdir()
    (system / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    monkeypatch.setattr(icd, "pip_runtimes", lambda: [library])
    for name in icd.USER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with icd.vendors_environment(system) as runtimes:
        assert runtimes == [library]
        vendors = Path(os.environ["OCL_ICD_VENDORS"])
        files = {p.name: p.read_text() for p in vendors.iterdir()}
    assert files == {"shrew-libintelocl.icd": f"{library}\n",
                     "nvidia.icd": "libnvidia-opencl.so.1\n"}
    assert "OCL_ICD_VENDORS" not in os.environ  # restored: child processes start clean
    assert not vendors.exists()


@pytest.mark.parametrize("variable", icd.USER_VARIABLES)
def test_the_users_icd_setting_wins(monkeypatch, tmp_path, variable):
    monkeypatch.setattr(icd, "pip_runtimes", lambda: [tmp_path / "libintelocl.so"])
    for name in icd.USER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, "/my/vendors")
    with icd.vendors_environment(tmp_path) as runtimes:
        assert runtimes == []
        assert os.environ[variable] == "/my/vendors"
        assert "OCL_ICD_VENDORS" not in os.environ or variable == "OCL_ICD_VENDORS"
    assert os.environ[variable] == "/my/vendors"


def test_pip_runtimes_are_found_where_pip_put_them():
    try:
        from importlib import metadata
        metadata.distribution("intel-opencl-rt")
    except metadata.PackageNotFoundError:
        assert icd.pip_runtimes() == []
        return
    [library] = icd.pip_runtimes()
    assert library.name == "libintelocl.so" and library.is_absolute() and library.is_file()


def test_a_fresh_process_finds_the_pip_runtime_by_itself():
    """Without any ICD variable set, shrew lists Intel's runtime where pip installed it."""
    if not icd.pip_runtimes():
        pytest.skip("intel-opencl-rt is not installed (pip install 'shrew[opencl]')")
    env = {k: v for k, v in os.environ.items() if k not in icd.USER_VARIABLES}
    run = subprocess.run([sys.executable, "-m", "shrew.backends.opencl"], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "Intel(R) OpenCL" in run.stdout, run.stdout
