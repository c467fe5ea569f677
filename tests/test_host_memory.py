"""The host-memory setting: freed multi-megabyte buffers are reused, not faulted in again."""
import os
import platform
import resource
import subprocess
import sys

import numpy as np
import pytest

import shrew
from shrew.backends import host_memory

glibc_only = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
    reason="the setting is made on glibc only")


def _faults_over_fresh_buffers() -> int:
    """Page faults over 10 rounds of making eight 4 MiB arrays and dropping them all, as a
    training step does with its temporaries."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        arrays = [np.ones(1 << 20, np.float32) for _ in range(8)]
        del arrays
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


@glibc_only
def test_cpu_backend_keeps_freed_buffers():
    shrew.ones(2, device="cpu")  # creating the backend applies the setting
    assert host_memory.keep_freed_memory()
    _faults_over_fresh_buffers()  # warm: the first buffer is faulted in once
    # Handing the 32 MiB back to the OS each round would cost about 80,000 faults.
    assert _faults_over_fresh_buffers() < 1000


_CHILD = """
import resource, numpy as np, shrew
from shrew.backends import host_memory
shrew.ones(2)
print(host_memory.keep_freed_memory())
"""


@glibc_only
def test_environment_variable_leaves_malloc_alone():
    env = dict(os.environ, SHREW_HOST_MALLOC="default")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "False"
