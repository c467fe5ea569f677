"""shrew.Generator: a seedable random stream for host-side sampling (data loading,
random_split), as torch.Generator.

It drives which samples and which order the data pipeline picks; it cannot reproduce
torch's own random numbers (a different algorithm: numpy's PCG64), only its behaviour:
the same seed gives the same stream."""
from __future__ import annotations

import json
import secrets

import numpy as np

from ..core.errors import ArgumentError, ShrewTypeError
from .random import rand
from .._tensor import Tensor


class Generator:
    """A random stream with its own state.  `device` is accepted for PyTorch's signature;
    the stream lives on the host whatever it names."""

    def __init__(self, device: object = "cpu") -> None:
        self.device = device
        self.manual_seed(secrets.randbits(63))  # as torch, an unseeded generator is random

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`; returns the generator (as torch's)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ShrewTypeError(f"Generator.manual_seed: seed must be an int, got "
                                 f"{type(seed).__name__}")
        self._initial_seed = int(seed)
        # negative seeds are allowed by torch; fold them into numpy's non-negative range
        self._rng = np.random.Generator(np.random.PCG64(int(seed) % 2 ** 64))
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        seed = secrets.randbits(63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed the stream started from."""
        return self._initial_seed

    def get_state(self) -> Tensor:
        """A snapshot of the stream, as an opaque int64 tensor (torch gives a uint8 one);
        set_state restores it."""
        text = json.dumps({"seed": self._initial_seed, "bits": self._rng.bit_generator.state})
        return Tensor(np.frombuffer(text.encode(), dtype=np.uint8).astype(np.int64))

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a snapshot from get_state."""
        try:
            values = (new_state.numpy() if isinstance(new_state, Tensor)
                      else np.asarray(new_state)).astype(np.uint8).tobytes()
            saved = json.loads(values.decode())
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = saved["bits"]
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
            raise ArgumentError(f"Generator.set_state: not a state from Generator.get_state "
                                f"({exc})") from None
        self._initial_seed, self._rng = int(saved["seed"]), rng
        return self

    def numpy(self) -> np.random.Generator:
        """The underlying numpy stream, for host-side draws (nn.init with generator=)."""
        return self._rng

    # Draws used by shrew.utils.data (host-side index sampling).
    def randperm(self, n: int) -> list[int]:
        """A random permutation of range(n)."""
        return self._rng.permutation(n).tolist()

    def randint(self, high: int, size: int) -> list[int]:
        """`size` integers drawn uniformly from range(high)."""
        return self._rng.integers(0, high, size=size).tolist()

    def random_seed(self) -> int:
        """A fresh 63-bit seed drawn from the stream (for seeding worker processes)."""
        return int(self._rng.integers(0, 2 ** 63 - 1))

    def choice(self, weights: np.ndarray, size: int, replace: bool) -> list[int]:
        """`size` indices drawn with probability proportional to `weights`."""
        return self._rng.choice(len(weights), size=size, replace=replace,
                                p=weights / weights.sum()).tolist()


def generator_from_global_seed() -> Generator:
    """A Generator seeded from shrew's global random state, so that shrew.manual_seed
    makes samplers without a generator of their own reproducible (as torch's global
    generator does)."""
    seed = int(rand((), dtype="float64").item() * 2 ** 53)
    return Generator().manual_seed(seed)
