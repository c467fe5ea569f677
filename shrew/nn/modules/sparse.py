"""torch.nn.modules.sparse: PyTorch's module path of shrew.nn's embeddings."""
from .. import (Embedding, EmbeddingBag)

__all__ = ["Embedding", "EmbeddingBag"]
