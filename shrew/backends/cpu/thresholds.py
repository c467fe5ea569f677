"""The sizes from which the cpu backend's library calls serve (backend.py's table says
which call each one gates): below them numpy's one-thread pass costs less than the call.
A module of its own so that the library modules (mkl/, onednn/) can read them without
importing backend.py, which imports them."""
from __future__ import annotations

from typing import Final

AXPY_MIN_SIZE: Final = 1 << 14
VML_MIN_SIZE: Final = 1 << 15
SUM_MIN_SIZE: Final = 1 << 15            # sums and adds of a bias
MIN_ELEMENTWISE_SIZE: Final = 1 << 15    # every oneDNN call but convolution and pooling's
SELECT_MIN_SIZE: Final = 1 << 14
CONV_FOLD_MIN_DEPTH: Final = 32          # C*kw, the depth of the folded GEMMs
# multiply-adds of a 16-bit product (M*N*K, times its batch) from which oneDNN's matmul
# serves: below it the widened float32 GEMM's three numpy passes cost less than the call
# (bfloat16: 16^3 widened 10 us, oneDNN 15; 64^3 23 and 18)
MATMUL_MIN_WORK: Final = 1 << 16
# multiply-adds of a float32 product from which oneDNN's matmul serves where it runs them
# (vendor.py): below it MKL's call costs less (Zen 4: 64x128x128 1.2-1.3x MKL's time,
# 20x200x800 0.89x, 256x1024x10 0.70x)
F32_MATMUL_MIN_WORK: Final = 1 << 21
