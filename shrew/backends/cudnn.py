"""``shrew.backends.cudnn``: PyTorch's cuDNN switches, accepted so that programs setting
them run.  shrew does not use cuDNN, so they change nothing: its kernels are
deterministic already (``deterministic``) and it has no algorithm search (``benchmark``)."""

enabled = True
"""Accepted and ignored."""
deterministic = False
"""Accepted and ignored: shrew's kernels give the same result on every run."""
benchmark = False
"""Accepted and ignored: shrew does not autotune its convolutions."""
allow_tf32 = True
"""Accepted and ignored (True at first, as PyTorch): shrew computes float32 in float32."""


def is_available() -> bool:
    """False: shrew does not use cuDNN."""
    return False
