#!/usr/bin/env bash
# The CUDA check, for a machine with an NVIDIA GPU: installs shrew with CuPy, then runs the
# conformance suite on cuda, the test suite (its CUDA tests run when a GPU is present) and
# the benchmarks on cuda.  Every step runs; the script fails if any did.
#
#   scripts/gpu_check.sh                        # the `cuda` extra
#   CUDA_EXTRA=cuda12 scripts/gpu_check.sh      # CuPy for CUDA 12 (driver >= 525)
#   CUDA_EXTRA=cuda13 scripts/gpu_check.sh      # CuPy for CUDA 13 (driver >= 580)
#
# It works in the virtual environment $VENV (default .venv, which git ignores).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py=$venv/bin/python
"$py" -m pip install -q -e ".[test,${CUDA_EXTRA:-cuda}]"
# The benchmarks compare with PyTorch on the CPU.
"$py" -c "import torch" 2>/dev/null ||
    "$py" -m pip install -q torch --index-url https://download.pytorch.org/whl/cpu
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
step "$py" -m pytest --pyargs shrew.testing.conformance --shrew-device cuda -q
step "$py" -m pytest -q --deselect tests/test_cuda_backend.py::test_cuda_passes_the_conformance_suite
step "$py" benchmarks/run.py --device cuda
if ((${#failed[@]})); then
    printf 'FAILED: %s\n' "${failed[@]}"
    exit 1
fi
echo "all CUDA checks passed"
