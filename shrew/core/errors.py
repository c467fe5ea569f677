"""The exceptions shrew raises for bad input.  Each message names the operation."""


class ShrewError(ValueError):
    """Bad input to a shrew operation.  The message names the op and the culprits."""


class ShapeError(ShrewError):
    """Shapes that do not fit the operation (broadcasting, dims, sizes)."""


class DeviceError(ShrewError):
    """An unknown or unusable device, or tensors on different devices."""


class DTypeError(ShrewError):
    """A dtype the operation or the device does not support."""


class ShrewIndexError(ShapeError, IndexError):
    """An index out of range, or an index of the wrong kind: an IndexError too (where
    PyTorch raises IndexError), which Python's iteration protocols rely on."""


class ShrewTypeError(ShrewError, TypeError):
    """An argument of the wrong kind, where PyTorch (and Python) raise TypeError."""


class ArgumentTypeError(ShrewError, TypeError):
    """An argument of the wrong Python type, where PyTorch raises TypeError."""


class LinAlgError(ShrewError):
    """A matrix the routine cannot handle: singular (inv, solve) or not positive-definite
    (cholesky), as torch.linalg.LinAlgError.  Found only by the computation itself."""


class DivisionByZeroError(ShrewError, RuntimeError):
    """Integer division or modulo by zero: a RuntimeError, as PyTorch's "ZeroDivisionError"."""


class MemoryOverlapError(ShrewError, RuntimeError):
    """An in-place write whose source partially overlaps the written tensor's memory: a
    RuntimeError, as PyTorch's "unsupported operation" refusal."""
