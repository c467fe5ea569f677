"""einops on shrew tensors: the backend einops finds by the name ``shrew`` and its layers.

einops chooses a backend among the subclasses of its ``AbstractBackend`` whose
``framework_name`` is an imported module, so defining :class:`ShrewBackend` (when shrew is
imported and einops is installed) is all it takes: ``rearrange``, ``reduce``, ``repeat``,
``einsum``, ``pack`` and ``unpack`` then accept shrew tensors, recorded for autograd.
The layers (``Rearrange``, ``Reduce``, ``EinMix``) are shrew modules in
:mod:`shrew.utils.einops.layers`, importable also as ``einops.layers.shrew`` after the
einops convention ``einops.layers.<framework>``.
"""
from .backend import ShrewBackend

__all__ = ["ShrewBackend"]
