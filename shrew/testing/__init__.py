"""Testing helpers: gradcheck, and the backend conformance suite (shrew.testing.conformance)."""
from .gradcheck import gradcheck

__all__ = ["gradcheck"]
