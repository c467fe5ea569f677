"""torch.nn.modules.transformer: PyTorch's module path of shrew.nn's transformers."""
from .. import (Transformer, TransformerEncoder, TransformerEncoderLayer, TransformerDecoder,
                 TransformerDecoderLayer)

__all__ = ["Transformer", "TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
           "TransformerDecoderLayer"]
