"""torch.fft's transforms, stft and istft, composed from one backend primitive.

``fft_pairs`` is the backend's complex DFT over dims of a pair tensor (ops/complex/),
unnormalised either way and recorded as ``FFT``, whose gradient is the transform the other
way.  Everything else is real ops on pairs around it: n= and s= trim (narrow) or zero-pad;
norm= scales; rfft keeps the first n//2 + 1 outputs of the transform of (x, 0); irfft
rebuilds the Hermitian spectrum (conjugates mirrored) and keeps the real part; hfft and
ihfft are irfft and rfft of the conjugate with the norm swapped, as PyTorch defines them.
So every gradient is the adjoint PyTorch gives, with no rule of its own.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core import op as O
from ..core.dtype import get_default_dtype
from ..core.errors import ArgumentError, DTypeError, ShapeError, ShrewTypeError
from ..core.fields import AnyTensor, record
from ..core.shape import fmt, normalize_dim
from .complex import arith
from .complex.pair import ComplexTensor, make, view_as_real

if TYPE_CHECKING:
    from .._tensor import Tensor

_NORMS = ("backward", "ortho", "forward")
_SWAPPED = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def fft_pairs(p: Tensor, dims: tuple, inverse: bool) -> Tensor:
    """The backend's unnormalised complex DFT over `dims` of pair tensor p (recorded)."""
    data = p._backend.fft(p._data, tuple(dims), bool(inverse))
    return record(data, p._backend, O.FFT(p, tuple(dims), bool(inverse)), p)


# -- helpers -------------------------------------------------------------------------------
def _input(op: str, x: Any) -> Tensor:
    if not isinstance(x, AnyTensor):
        raise ShrewTypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _complex(x: Tensor) -> Tensor:
    """x as a complex tensor (a real one gains zero imaginary parts, integers promoted)."""
    if x.dtype.is_complex:
        return x
    if not x.dtype.is_floating_point:
        x = x.to_dtype(get_default_dtype())
    return arith.to_dtype(x, x.dtype.to_complex())


def _real(op: str, x: Tensor) -> Tensor:
    if x.dtype.is_complex:
        raise DTypeError(f"{op}: expects a real input tensor, but got {x.dtype}")
    return x if x.dtype.is_floating_point else x.to_dtype(get_default_dtype())


def _norm(op: str, norm: str | None) -> str:
    norm = "backward" if norm is None else norm
    if norm not in _NORMS:
        raise ArgumentError(f"{op}: invalid normalization mode {norm!r} (expected one of "
                            f"{', '.join(_NORMS)})")
    return norm


def _factor(norm: str, n: int, inverse: bool) -> float:
    """What the unnormalised transform of length n is multiplied by under norm."""
    if norm == "ortho":
        return 1.0 / math.sqrt(n) if n else 1.0
    return 1.0 / n if n and (norm == "backward") == inverse else 1.0


def _scaled(p: Tensor, factor: float) -> Tensor:
    return p if factor == 1.0 else p * factor


def _resized(t: Tensor, dim: int, n: int) -> Tensor:
    """t (a real or pair tensor) trimmed or zero-padded to n along dim."""
    size = t.shape[dim]
    if n == size:
        return t
    if n < size:
        return t.narrow(dim, 0, n)
    return t.pad([0, 0] * (t.ndim - dim - 1) + [0, n - size])


def _check_n(op: str, n: int) -> None:
    if n < 1:
        raise ShapeError(f"{op}: invalid number of data points ({n}) specified")


def _plan(op: str, x: Tensor, s: Sequence[int] | None, dim: Any,
          default_dims: tuple | None = None) -> tuple[list[int], list[int | None]]:
    """(dims, sizes) as PyTorch reads s= and dim= (None in sizes: keep the input's)."""
    if dim is None and s is None:
        dims = list(default_dims) if default_dims is not None else list(range(x.ndim))
    elif dim is None:
        assert s is not None
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, x.ndim, op) for d in dims]
    if len(set(dims)) != len(dims):
        raise ArgumentError(f"{op}: dims must be unique, got {dims}")
    if s is None:
        sizes: list[int | None] = [None] * len(dims)
    else:
        if len(s) != len(dims):
            raise ShapeError(f"{op}: when given, dim and shape arguments must have the same "
                             f"length (s={list(s)}, dim={dims})")
        sizes = [None if n == -1 else int(n) for n in s]
        for n in sizes:
            if n is not None:
                _check_n(op, n)
    if not dims and x.ndim == 0:
        raise ShapeError(f"{op}: expects a tensor with at least one dim, got shape "
                         f"{fmt(x.shape)}")
    return dims, sizes


def _c2c(z: Tensor, dims: list[int], sizes: list[int | None], norm: str,
         inverse: bool) -> Tensor:
    p = view_as_real(z)
    factor = 1.0
    for d, n in zip(dims, sizes):
        if n is not None:
            p = _resized(p, d, n)
        factor *= _factor(norm, p.shape[d], inverse)
    if dims:
        p = fft_pairs(p, tuple(sorted(dims)), inverse)
    return make(_scaled(p, factor))


def _r2c(op: str, x: Tensor, dim: int, n: int | None, norm: str) -> Tensor:
    """rfft of real x along dim: the first n//2 + 1 outputs."""
    if n is not None:
        x = _resized(x, dim, n)
    n = x.shape[dim]
    _check_n(op, n)
    z = _complex(x)
    p = fft_pairs(view_as_real(z), (dim,), False)
    return make(_scaled(p.narrow(dim, 0, n // 2 + 1), _factor(norm, n, False)))


def _c2r(op: str, z: Tensor, dim: int, n: int | None, norm: str) -> Tensor:
    """irfft of complex z along dim to n real outputs: the Hermitian spectrum rebuilt."""
    n = 2 * (z.shape[dim] - 1) if n is None else n
    _check_n(op, n)
    half = _resized(view_as_real(z), dim, n // 2 + 1)
    tail = n - n // 2 - 1  # outputs n//2 + 1 .. n - 1 mirror inputs n - n//2 - 1 .. 1
    if tail:
        mirrored = view_as_real(arith.conj(make(half.narrow(dim, 1, tail)))).flip(dim)
        from .shape.recorded import cat
        full = cat([half, mirrored], dim)
    else:
        full = half
    out = fft_pairs(full, (dim,), True).select(-1, 0)
    return _scaled(out, _factor(norm, n, True))


# -- torch.fft -----------------------------------------------------------------------------
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
        ) -> Tensor:
    """The 1-d discrete Fourier transform along dim (torch.fft.fft)."""
    x = _input("fft", input)
    dims, sizes = _plan("fft", x, None if n is None else [n], [dim])
    return _c2c(_complex(x), dims, sizes, _norm("fft", norm), False)


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
         ) -> Tensor:
    x = _input("ifft", input)
    dims, sizes = _plan("ifft", x, None if n is None else [n], [dim])
    return _c2c(_complex(x), dims, sizes, _norm("ifft", norm), True)


def fftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
         norm: str | None = None) -> Tensor:
    x = _input("fftn", input)
    dims, sizes = _plan("fftn", x, s, dim)
    return _c2c(_complex(x), dims, sizes, _norm("fftn", norm), False)


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    x = _input("ifftn", input)
    dims, sizes = _plan("ifftn", x, s, dim)
    return _c2c(_complex(x), dims, sizes, _norm("ifftn", norm), True)


def fft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
         norm: str | None = None) -> Tensor:
    return fftn(input, s, dim, norm)


def ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    return ifftn(input, s, dim, norm)


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
         ) -> Tensor:
    x = _real("rfft", _input("rfft", input))
    d = normalize_dim(dim, x.ndim, "rfft")
    return _r2c("rfft", x, d, n, _norm("rfft", norm))


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
          ) -> Tensor:
    x = _input("irfft", input)
    d = normalize_dim(dim, x.ndim, "irfft")
    return _c2r("irfft", _complex(x), d, n, _norm("irfft", norm))


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    x = _real("rfftn", _input("rfftn", input))
    dims, sizes = _plan("rfftn", x, s, dim)
    norm = _norm("rfftn", norm)
    if not dims:
        raise ShapeError("rfftn: must transform at least one axis")
    z = _r2c("rfftn", x, dims[-1], sizes[-1], norm)
    return _c2c(z, dims[:-1], sizes[:-1], norm, False)


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    x = _input("irfftn", input)
    dims, sizes = _plan("irfftn", x, s, dim)
    norm = _norm("irfftn", norm)
    if not dims:
        raise ShapeError("irfftn: must transform at least one axis")
    z = _c2c(_complex(x), dims[:-1], sizes[:-1], norm, True)
    return _c2r("irfftn", z, dims[-1], sizes[-1], norm)


def rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    return rfftn(input, s, dim, norm)


def irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
           norm: str | None = None) -> Tensor:
    return irfftn(input, s, dim, norm)


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
         ) -> Tensor:
    """The FFT of a Hermitian-symmetric signal given by its first half: a real result."""
    x = _input("hfft", input)
    return irfft(arith.conj(_complex(x)), n, dim, _SWAPPED[_norm("hfft", norm)])


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None,  # noqa: A002
          ) -> Tensor:
    x = _input("ihfft", input)
    return arith.conj(rfft(x, n, dim, _SWAPPED[_norm("ihfft", norm)]))


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
          norm: str | None = None) -> Tensor:
    x = _input("hfftn", input)
    return irfftn(arith.conj(_complex(x)), s, dim, _SWAPPED[_norm("hfftn", norm)])


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: Any = None,  # noqa: A002
           norm: str | None = None) -> Tensor:
    x = _input("ihfftn", input)
    return arith.conj(rfftn(x, s, dim, _SWAPPED[_norm("ihfftn", norm)]))


def hfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
          norm: str | None = None) -> Tensor:
    return hfftn(input, s, dim, norm)


def ihfft2(input: Tensor, s: Sequence[int] | None = None, dim: Any = (-2, -1),  # noqa: A002
           norm: str | None = None) -> Tensor:
    return ihfftn(input, s, dim, norm)


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point FFT: [0, 1, ..., -(n//2), ..., -1] / (d n)."""
    return _frequencies([k if k < (n + 1) // 2 else k - n for k in range(n)], n, d, dtype,
                        device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """The sample frequencies of rfft's n//2 + 1 outputs: [0, 1, ..., n//2] / (d n)."""
    return _frequencies(list(range(n // 2 + 1)), n, d, dtype, device, requires_grad)


def _frequencies(counts: list, n: int, d: float, dtype: Any, device: Any,
                 requires_grad: bool) -> Tensor:
    """counts * (1 / (d n)), multiplied in dtype (default float), as PyTorch rounds them."""
    from .creation import tensor
    dtype = get_default_dtype() if dtype is None else dtype
    out = tensor(counts, dtype=dtype, device=device) * (1.0 / (n * d))
    return out.requires_grad_(requires_grad)


def _shift(op: str, x: Tensor, dim: Any, sign: int) -> Tensor:
    from .shape.composed import roll
    x = _input(op, x)
    dims = list(range(x.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [normalize_dim(d, x.ndim, op) for d in dims]
    shifts = [sign * (x.shape[d] // 2) for d in dims]
    if isinstance(x, ComplexTensor):
        return make(roll(view_as_real(x), shifts, dims))
    return roll(x, shifts, dims)


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Moves the zero frequency to the middle (torch.fft.fftshift)."""
    return _shift("fftshift", input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of fftshift."""
    return _shift("ifftshift", input, dim, -1)


# -- short-time transforms -----------------------------------------------------------------
def _window(op: str, window: Tensor | None, n_fft: int, win_length: int, like: Tensor) -> Tensor:
    """The window (ones when None) zero-padded on both sides to n_fft, centred."""
    from .creation import ones
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise ShapeError(f"{op}: expected a 1-d window of size {win_length} (win_length), "
                         f"got shape {fmt(window.shape)}")
    left = (n_fft - win_length) // 2
    return window.pad([left, n_fft - win_length - left]) if win_length < n_fft else window


def _lengths(op: str, n_fft: int, hop_length: int | None, win_length: int | None
             ) -> tuple[int, int]:
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0 or not 0 < win <= n_fft:
        raise ArgumentError(f"{op}: expected 0 < hop_length and 0 < win_length <= n_fft, "
                            f"got n_fft={n_fft}, hop_length={hop}, win_length={win}")
    return hop, win


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None) -> Tensor:
    """The short-time Fourier transform (torch.stft): frames of n_fft samples every
    hop_length, windowed and transformed; [(B,) n_freq, n_frames]."""
    from ..nn.functional import pad
    x = _input("stft", input)
    if return_complex is None and not x.dtype.is_complex and \
            (window is None or not window.dtype.is_complex):
        raise ArgumentError("stft: requires the return_complex parameter be given for real "
                            "inputs, and will further require that return_complex=True in a "
                            "future PyTorch release")
    if x.ndim not in (1, 2):
        raise ShapeError(f"stft: expected a 1D or 2D tensor, got shape {fmt(x.shape)}")
    hop, win = _lengths("stft", n_fft, hop_length, win_length)
    batched = x.ndim == 2
    x = x if batched else x.unsqueeze(0)
    if center:
        half = n_fft // 2
        if x.dtype.is_complex:
            p = view_as_real(x).transpose(1, 2)  # [B, 2, L]: the parts as channels
            x = make(pad(p, [half, half], mode=pad_mode).transpose(1, 2))
        else:
            x = pad(x.unsqueeze(1), [half, half], mode=pad_mode).squeeze(1)
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise ShapeError(f"stft: expected 0 < n_fft <= {length} (the padded input's length), "
                         f"got n_fft={n_fft}")
    w = _window("stft", window, n_fft, win, x)
    if x.dtype.is_complex:  # frames of the pairs: [B, frames, 2, n_fft] -> [B, frames, n_fft]
        frames = make(view_as_real(x).unfold(1, n_fft, hop).transpose(-1, -2))
    else:
        frames = x.unfold(-1, n_fft, hop)
    frames = frames * w
    two_sided = x.dtype.is_complex or w.dtype.is_complex
    onesided = not two_sided if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spec = rfft(frames, dim=-1, norm=norm) if onesided else fft(frames, dim=-1, norm=norm)
    spec = spec.transpose(-1, -2)
    spec = spec if batched else spec.squeeze(0)
    return spec if return_complex is not False else view_as_real(spec)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of stft (torch.istft): each frame transformed back, windowed and
    overlap-added, divided by the summed squared window."""
    from ..nn.functional import fold
    z = _input("istft", input)
    if not z.dtype.is_complex:
        raise DTypeError(f"istft: requires a complex-valued input tensor, got {z.dtype}")
    if z.ndim not in (2, 3):
        raise ShapeError(f"istft: expected a 2D or 3D complex tensor, got shape "
                         f"{fmt(z.shape)}")
    hop, win = _lengths("istft", n_fft, hop_length, win_length)
    batched = z.ndim == 3
    z = z if batched else z.unsqueeze(0)
    n_freq, n_frames = z.shape[-2], z.shape[-1]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_freq != n_fft // 2 + 1:
        raise ShapeError(f"istft: a one-sided spectrum of n_fft={n_fft} has {n_fft // 2 + 1} "
                         f"frequencies, got {n_freq}")
    if not onesided and n_freq != n_fft:
        raise ShapeError(f"istft: a two-sided spectrum needs n_fft={n_fft} frequencies, got "
                         f"{n_freq}")
    norm = "ortho" if normalized else "backward"
    spec = z.transpose(-1, -2)  # [B, frames, freq]
    if return_complex:
        if onesided:
            raise ArgumentError("istft: cannot have onesided output if window or input is "
                                "complex (return_complex=True)")
        frames = ifft(spec, n=n_fft, dim=-1, norm=norm)
    else:  # a real signal: the first half of the spectrum, as PyTorch reads it
        if window is not None and window.dtype.is_complex:
            raise DTypeError("istft: complex windows require return_complex=True")
        frames = irfft(spec.narrow(-1, 0, min(n_freq, n_fft // 2 + 1)), n=n_fft, dim=-1,
                       norm=norm)
    w = _window("istft", window, n_fft, win, z)
    frames = frames * w
    total = n_fft + hop * (n_frames - 1)

    def overlap_add(t: Tensor) -> Tensor:  # [B, frames, n_fft] -> [B, total]
        if t.dtype.is_complex:
            p = view_as_real(t)
            return arith.pack(overlap_add(p.select(-1, 0)), overlap_add(p.select(-1, 1)))
        return fold(t.transpose(1, 2), (1, total), (1, n_fft), stride=(1, hop)).reshape(
            t.shape[0], total)

    y = overlap_add(frames)
    envelope = overlap_add((w * w).reshape(1, 1, n_fft).expand(1, n_frames, n_fft))
    start = n_fft // 2 if center else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + length
    end = min(end, total)
    y = y.narrow(-1, start, end - start)
    envelope = envelope.narrow(-1, start, end - start)
    if bool((envelope.abs() < 1e-11).any()):
        raise ArgumentError("istft: window overlap add min: the window's squared sum is "
                            "(nearly) zero somewhere (NOLA condition failed)")
    y = y / envelope
    if length is not None and y.shape[-1] < length:
        pad_by = length - y.shape[-1]
        y = make(_resized(view_as_real(y), 1, length)) if y.dtype.is_complex else \
            y.pad([0, pad_by])
    return y if batched else y.squeeze(0)
