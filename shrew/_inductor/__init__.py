"""``torch._inductor``: only its config, which performance scripts set (gpt-fast's
generate.py sets three settings before anything else)."""
from . import config  # noqa: F401
