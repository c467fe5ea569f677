"""torch.nn.modules.rnn: PyTorch's module path of shrew.nn's recurrent layers."""
from .. import (RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell)

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
