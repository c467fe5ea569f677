"""Whole-module save/load, shrew.serialization's allowlist and shrew.nn.modules' class
paths, against PyTorch's names."""
import dataclasses
import io
import json

import numpy as np
import pytest
import safetensors.numpy
import torch

import shrew
from shrew import nn
from shrew.serialization.tree import FORMAT, FORMAT_KEY


class LanguageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.rnn = nn.LSTM(4, 5, num_layers=2)
        self.encoder = nn.TransformerEncoderLayer(5, 1, 8, dropout=0.0)
        self.decoder = nn.Linear(5, 7)
        self.tied = self.decoder  # the same module twice
        self.vocabulary = {"a", "b"}
        self.sizes = (4, 5)

    def forward(self, tokens):
        return self.decoder(self.encoder(self.rnn(self.embed(tokens))[0]))


def saved(obj):
    buffer = io.BytesIO()
    shrew.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_a_whole_module_round_trips_when_its_class_is_allowed():
    model = LanguageModel()
    with shrew.serialization.safe_globals([LanguageModel]):
        loaded = shrew.load(saved(model))
    assert type(loaded) is LanguageModel and loaded.tied is loaded.decoder
    assert loaded.encoder.activation is model.encoder.activation
    assert loaded.vocabulary == {"a", "b"} and loaded.sizes == (4, 5)
    assert list(loaded.state_dict()) == list(model.state_dict())
    assert all(isinstance(p, nn.Parameter) for p in loaded.parameters())
    tokens = shrew.tensor([[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(loaded(tokens).detach().numpy(), model(tokens).detach().numpy())
    # the loaded module trains: its parameters are leaves with gradients
    loaded(tokens).sum().backward()
    assert loaded.decoder.weight.grad is not None


def test_a_module_of_an_unlisted_class_is_refused_whatever_weights_only_says():
    buffer = saved(LanguageModel())
    with pytest.raises(shrew.ShrewError, match="LanguageModel, which is not allowed.*"
                                               "add_safe_globals"):
        shrew.load(buffer)
    buffer.seek(0)
    with pytest.raises(shrew.ShrewError, match="even with weights_only=False"):
        shrew.load(buffer, weights_only=False)


def test_shrew_modules_need_no_allowlist():
    model = nn.Sequential(nn.Linear(3, 2), nn.GELU(approximate="tanh"))
    loaded = shrew.load(saved(model))
    x = shrew.randn(4, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert repr(loaded) == repr(model)


def test_the_allowlist_functions_as_in_pytorch():
    shrew.serialization.clear_safe_globals()
    assert shrew.serialization.get_safe_globals() == []
    with shrew.serialization.safe_globals([LanguageModel]):
        assert shrew.serialization.get_safe_globals() == [LanguageModel]
    assert shrew.serialization.get_safe_globals() == []
    shrew.serialization.add_safe_globals([(LanguageModel, "elsewhere.Model")])
    try:
        assert shrew.serialization.get_safe_globals() == [LanguageModel]
    finally:
        shrew.serialization.clear_safe_globals()
    with pytest.raises(shrew.ShrewError, match="add_safe_globals: 3 is not a class"):
        shrew.serialization.add_safe_globals([3])
    for name in ("safe_globals", "add_safe_globals", "get_safe_globals", "clear_safe_globals"):
        assert hasattr(torch.serialization, name)


def crafted(description):
    """A shrew checkpoint file whose structure is `description` (as an attacker writes it)."""
    metadata = {FORMAT_KEY: json.dumps(description), "format": f"shrew-{FORMAT}"}
    data = safetensors.numpy.save({"t0": np.zeros(1, np.float32)}, metadata=metadata)
    return io.BytesIO(data)


@pytest.mark.parametrize("name", ["os:system", "builtins:eval",
                                  "shrew.serialization.save_load:os.system",
                                  "shrew.serialization.tree:json.loads", "shrew.tensor:Tensor"])
def test_a_file_cannot_name_anything_else(name):
    for description in ({"global": name},
                        {"object": name, "id": "m0", "state": {"dict": []}}):
        with pytest.raises(shrew.ShrewError, match="not allowed"):
            shrew.load(crafted(description), weights_only=False)


def test_an_allowed_class_that_is_not_a_module_is_not_rebuilt():
    description = {"object": "builtins:dict", "id": "m0", "state": {"dict": []}}
    with shrew.serialization.safe_globals([dict]):
        with pytest.raises(shrew.ShrewError, match="not an nn.Module class"):
            shrew.load(crafted(description))


def test_what_cannot_be_saved_is_named():
    with pytest.raises(shrew.ShrewError, match=r"cannot save a generator at \[0\]"):
        shrew.save([(i for i in range(2))], io.BytesIO())


# Where a file saved before nn/ took PyTorch's layout names some of shrew's classes and
# functions, and where they are now.
FORMER_NAMES = {
    "shrew.nn.modules.linear:Linear": "shrew.nn.layers:Linear",
    "shrew.nn.modules.dropout:Dropout": "shrew.nn.layers:Dropout",
    "shrew.nn.modules.batchnorm:BatchNorm1d": "shrew.nn.normalization:BatchNorm1d",
    "shrew.nn.modules.transformer:TransformerBlock": "shrew.nn.attention:TransformerBlock",
    "shrew.nn.modules.activation:MultiheadAttention": "shrew.nn.attention:MultiheadAttention",
    "shrew.nn.modules.container:Sequential": "shrew.nn.container:Sequential",
    "shrew.nn.modules.flatten:Unflatten": "shrew.nn.layers:Unflatten",
    "shrew.nn.functional.padding:pad": "shrew.nn.functional.vision:pad",
}


def test_a_file_that_names_the_former_module_paths_still_loads():
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.0),
                          nn.Unflatten(1, (1, 4)), nn.TransformerBlock(4, 1))
    model.pad = shrew.nn.functional.pad
    model.eval()
    data = saved(model).getvalue()
    length = int.from_bytes(data[:8], "little")
    description = json.loads(data[8:8 + length])["__metadata__"][FORMAT_KEY]
    for now, before in FORMER_NAMES.items():
        assert f'"{now}"' in description
        description = description.replace(f'"{now}"', f'"{before}"')
    tensors = safetensors.numpy.load(data)
    metadata = {FORMAT_KEY: description, "format": f"shrew-{FORMAT}"}
    loaded = shrew.load(io.BytesIO(safetensors.numpy.save(tensors, metadata=metadata)))
    assert [type(m) for m in loaded] == [type(m) for m in model]
    assert loaded.pad is shrew.nn.functional.pad
    x = shrew.randn(2, 3)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())


PATHS = {
    "module": ["Module"], "linear": ["Identity", "Linear", "NonDynamicallyQuantizableLinear"],
    "conv": ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"],
    "activation": ["ReLU", "GELU", "Softmax", "MultiheadAttention", "PReLU"],
    "loss": ["CrossEntropyLoss", "MSELoss", "NLLLoss", "CTCLoss"],
    "container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"],
    "dropout": ["Dropout", "Dropout2d", "AlphaDropout"], "sparse": ["Embedding", "EmbeddingBag"],
    "normalization": ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d"], "instancenorm": ["InstanceNorm2d"],
    "rnn": ["RNN", "LSTM", "GRU", "LSTMCell", "RNNBase"],
    "transformer": ["Transformer", "TransformerEncoder", "TransformerEncoderLayer"],
    "pooling": ["MaxPool2d", "AvgPool2d"], "flatten": ["Flatten", "Unflatten"],
    "pixelshuffle": ["PixelShuffle"], "upsampling": ["Upsample"],
}


@pytest.mark.parametrize("module", sorted(PATHS))
def test_nn_modules_paths_are_pytorchs(module):
    ours = getattr(shrew.nn.modules, module)
    theirs = getattr(torch.nn.modules, module)
    for name in PATHS[module]:
        assert hasattr(theirs, name)
        expected = nn.Linear if name == "NonDynamicallyQuantizableLinear" else getattr(nn, name)
        assert getattr(ours, name) is expected
    assert set(ours.__all__) <= set(dir(theirs))


@dataclasses.dataclass
class RunConfig:
    """A checkpoint's config object (build-nanogpt saves its GPTConfig dataclass)."""
    n_layer: int = 2
    name: str = "gpt"
    scale: object = None


def test_a_plain_object_in_a_checkpoint_comes_back_once_its_class_is_allowed():
    w = shrew.arange(3.0)
    buffer = saved({"config": RunConfig(4, "x", w), "w": w, "again": None})
    with pytest.raises(shrew.ShrewError, match="RunConfig, which is not allowed"):
        shrew.load(buffer)
    buffer.seek(0)
    with shrew.serialization.safe_globals([RunConfig]):
        loaded = shrew.load(buffer)
    config = loaded["config"]
    assert type(config) is RunConfig and (config.n_layer, config.name) == (4, "x")
    assert config.scale is loaded["w"] and config.scale.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(shrew.ShrewError, match="cannot save a object at \\['x'\\]"):
        shrew.save({"x": object()}, io.BytesIO())


def test_a_checkpoint_naming_a_class_with_its_own_new_is_refused():
    class_name = f"{__name__}:WithNew"
    with shrew.serialization.safe_globals([WithNew]):
        with pytest.raises(shrew.ShrewError, match="not an nn.Module class or a class of "
                                                   "plain objects"):
            shrew.load(crafted({"object": class_name, "id": "m0", "state": {"dict": []}}))


class WithNew:
    def __new__(cls, *args):
        raise AssertionError("a file must never run a class's __new__")
