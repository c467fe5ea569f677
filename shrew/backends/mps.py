"""``shrew.backends.mps``: Apple's Metal backend, which shrew does not have."""


def is_available() -> bool:
    """False: shrew has no Metal backend."""
    return False


def is_built() -> bool:
    """False: shrew has no Metal backend."""
    return False
