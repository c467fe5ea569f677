"""Testing helpers: gradcheck, assert_close, and the backend conformance suite
(shrew.testing.conformance)."""
from .comparison import assert_allclose, assert_close
from .gradcheck import gradcheck

__all__ = ["assert_allclose", "assert_close", "gradcheck"]
