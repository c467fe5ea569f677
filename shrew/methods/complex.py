"""Tensor's methods for complex numbers and spectra (ops/complex/, ops/spectral.py), as
a real tensor has them; a complex tensor's own are in ops/complex/pair.py.  Those modules
define ComplexTensor, a Tensor subclass, so they are imported when first called."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._tensor import Tensor


class ComplexMethods:
    __slots__ = ()

    # A real tensor's real part is itself, and it has no imaginary part (PyTorch refuses)
    @property
    def real(self: Any) -> Tensor:
        return self

    @property
    def imag(self: Any) -> Tensor:
        from ..ops.complex import pair
        return pair.imag(self)

    def angle(self: Any) -> Tensor:
        from ..ops.complex import arith
        return arith.angle(self)

    def stft(self: Any, n_fft: int, hop_length: int | None = None,
             win_length: int | None = None, window: Tensor | None = None, center: bool = True,
             pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
             return_complex: bool | None = None) -> Tensor:
        from ..ops import spectral
        return spectral.stft(self, n_fft, hop_length, win_length, window, center, pad_mode,
                             normalized, onesided, return_complex)

    def istft(self: Any, n_fft: int, hop_length: int | None = None,
              win_length: int | None = None, window: Tensor | None = None, center: bool = True,
              normalized: bool = False, onesided: bool | None = None, length: int | None = None,
              return_complex: bool = False) -> Tensor:
        from ..ops import spectral
        return spectral.istft(self, n_fft, hop_length, win_length, window, center, normalized,
                              onesided, length, return_complex)
