"""torch.fft: discrete Fourier transforms (ops/spectral.py), on every backend through the
one ``fft`` primitive (numpy's pocketfft on cpu, cuFFT on cuda, a DFT kernel on OpenCL)."""
from ..ops.spectral import (fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft,
                           ifft2, ifftn, ifftshift, ihfft, ihfft2, ihfftn, irfft, irfft2, irfftn,
                           rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
