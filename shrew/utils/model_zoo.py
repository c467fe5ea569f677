"""``shrew.utils.model_zoo``: torch.utils.model_zoo's old name for the hub's loader."""
from ..hub import load_state_dict_from_url as load_url

__all__ = ["load_url"]
