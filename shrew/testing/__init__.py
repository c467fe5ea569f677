"""Testing helpers: gradcheck, assert_close, and the backend conformance suite
(shrew.testing.conformance)."""
from .comparison import assert_close
from .gradcheck import gradcheck

__all__ = ["assert_close", "gradcheck"]
