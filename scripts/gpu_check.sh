#!/usr/bin/env bash
# The CUDA check, for a machine with an NVIDIA GPU: installs shrew with CuPy, then runs the
# conformance suite on cuda, the test suite (its CUDA tests run when a GPU is present) and
# the benchmarks' GPU lanes.  Every step runs; the script fails if any did.  About 4
# minutes on an H200 machine with PYTHON= (2026-11-28).
#
#   scripts/gpu_check.sh                        # the `cuda` extra
#   CUDA_EXTRA=cuda12 scripts/gpu_check.sh      # CuPy for CUDA 12 (driver >= 525)
#   CUDA_EXTRA=cuda13 scripts/gpu_check.sh      # CuPy for CUDA 13 (driver >= 580)
#
#   PYTHON=python3 scripts/gpu_check.sh         # a machine without package registries
#
# It works in the virtual environment $VENV (default .venv, which git ignores).  With
# PYTHON set it uses that interpreter as it is instead, which must already hold CuPy,
# PyTorch, pytest, hypothesis and shrew's dependencies (a GPU image with no network):
# shrew is installed into it without its dependencies, and the tests that need the test
# extra's other tools (ruff, mypy, pyopencl, oneDNN, mpi4py) skip or are left out.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${PYTHON:-}" ]; then
    py=$PYTHON
    "$py" -m pip install -q --no-deps --no-build-isolation --no-index -e .
    tests=(tests/test_cuda_backend.py tests/test_cuda_nvrtc.py tests/test_benchmarks.py)
else
    venv=${VENV:-.venv}
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    py=$venv/bin/python
    "$py" -m pip install -q -e ".[test,${CUDA_EXTRA:-cuda}]"
    tests=()
fi
# Stops here, with shrew's reason, if CuPy cannot use a GPU.
"$py" -c "
import sys, shrew
try:
    shrew.zeros(1, device='cuda')
except shrew.DeviceError as exc:
    sys.exit(f'no CUDA check is possible here: {exc}')
print('devices:', shrew.devices())"

failed=()
step() {
    echo "== $*"
    "$@" || failed+=("$*")
}
# pytest-xdist, where installed, spreads the tests over the machine's cores (a GPU machine
# has many; the 5790 conformance cases took 40 s on 12 workers of an H200 machine).
parallel=()
if "$py" -c "import xdist" 2>/dev/null; then parallel=(-n "${WORKERS:-8}"); fi
step "$py" -m pytest --pyargs shrew.testing.conformance --shrew-device cuda -q "${parallel[@]}"
step "$py" -m pytest -q "${parallel[@]}" "${tests[@]}" \
    --deselect tests/test_cuda_backend.py::test_cuda_passes_the_conformance_suite
# The GPU lanes (eager, shrew.compile, bf16 autocast) beside PyTorch's; BENCH_ARGS adds to
# them (--rounds 15 for the full count, say).
step "$py" benchmarks/run.py --cuda --no-cpu --no-opencl --quick --compiled ${BENCH_ARGS:-}
if ((${#failed[@]})); then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all CUDA checks passed"
