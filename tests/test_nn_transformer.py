"""MultiheadAttention, scaled_dot_product_attention and the Transformer family agree with
PyTorch given the same state_dict: outputs, attention weights and gradients (float64), in
eval mode and in training mode with dropout 0."""
from __future__ import annotations

import numpy as np
import pytest

import shrew
from shrew import nn
from shrew.nn import functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def load(ours, theirs):
    """theirs's state_dict into ours (the keys must be the same, in the same order)."""
    state = theirs.state_dict()
    assert list(ours.state_dict()) == list(state)
    ours.load_state_dict({k: v.detach().numpy() for k, v in state.items()})
    return ours.double()


def pair(data, grad=True):
    data = np.asarray(data)
    floating = data.dtype.kind == "f"
    return (shrew.tensor(data, requires_grad=grad and floating),
            torch.tensor(data, requires_grad=grad and floating))


def close(ours, theirs, tol=1e-10):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)


def grads_agree(out, ref, pairs, tol=1e-9):
    w = np.random.default_rng(9).standard_normal(out.shape)
    grads = (out * shrew.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    for ours, theirs in pairs:
        close(grads[ours], theirs.grad, tol)


# -- scaled_dot_product_attention --------------------------------------------------------------
@pytest.mark.parametrize("mask_kind", [None, "bool", "float", "causal"])
@pytest.mark.parametrize("scale", [None, 0.3])
def test_sdpa_masks_and_scale_match_torch(mask_kind, scale):
    r = np.random.default_rng(1)
    (q, tq), (k, tk), (v, tv) = (pair(r.standard_normal((2, 3, 4, 5))),
                                 pair(r.standard_normal((2, 3, 6, 5))),
                                 pair(r.standard_normal((2, 3, 6, 7))))
    kw, tkw = {"scale": scale}, {"scale": scale}
    if mask_kind == "bool":
        m = r.random((2, 1, 4, 6)) < 0.7
        m[..., 0] = True
        kw["attn_mask"], tkw["attn_mask"] = pair(m)
    elif mask_kind == "float":
        kw["attn_mask"], tkw["attn_mask"] = pair(r.standard_normal((4, 6)), grad=False)
    elif mask_kind == "causal":
        kw["is_causal"] = tkw["is_causal"] = True
    out = F.scaled_dot_product_attention(q, k, v, **kw)
    ref = TF.scaled_dot_product_attention(tq, tk, tv, **tkw)
    close(out, ref)
    grads_agree(out, ref, [(q, tq), (k, tk), (v, tv)])


def test_sdpa_grouped_query_attention_matches_torch():
    r = np.random.default_rng(2)
    (q, tq), (k, tk), (v, tv) = (pair(r.standard_normal((2, 6, 4, 5))),
                                 pair(r.standard_normal((2, 2, 3, 5))),
                                 pair(r.standard_normal((2, 2, 3, 5))))
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    ref = TF.scaled_dot_product_attention(tq, tk, tv, enable_gqa=True)
    close(out, ref)
    grads_agree(out, ref, [(q, tq), (k, tk), (v, tv)])


def test_sdpa_errors():
    q = shrew.randn(2, 4, 5)
    with pytest.raises(shrew.ShrewError, match="give attn_mask or is_causal=True, not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=shrew.ones(4, 4), is_causal=True)
    with pytest.raises(shrew.ShapeError, match=r"shapes \[3, 4\] and \[2, 4, 4\] do not broadcast"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=shrew.ones(3, 4))
    with pytest.raises(shrew.ShapeError, match="enable_gqa"):
        F.scaled_dot_product_attention(shrew.randn(1, 3, 4, 5), shrew.randn(1, 2, 4, 5),
                                       shrew.randn(1, 2, 4, 5), enable_gqa=True)


# -- MultiheadAttention ---------------------------------------------------------------------------
MHA_OPTIONS = [{}, {"batch_first": True}, {"add_bias_kv": True}, {"add_zero_attn": True},
               {"kdim": 3, "vdim": 5}, {"bias": False}]


@pytest.mark.parametrize("options", MHA_OPTIONS)
@pytest.mark.parametrize("masks", ["none", "padding", "bool", "float", "per_head"])
def test_multihead_attention_matches_torch(options, masks):
    r = np.random.default_rng(3)
    theirs = torch.nn.MultiheadAttention(8, 2, **options).double()
    ours = load(nn.MultiheadAttention(8, 2, **options), theirs)
    n, lq, lk = 2, 4, 5
    batch_first = options.get("batch_first", False)

    def shape(length, dim):
        return (n, length, dim) if batch_first else (length, n, dim)
    (q, tq), (k, tk), (v, tv) = (pair(r.standard_normal(shape(lq, 8))),
                                 pair(r.standard_normal(shape(lk, options.get("kdim", 8)))),
                                 pair(r.standard_normal(shape(lk, options.get("vdim", 8)))))
    kw, tkw = {}, {}
    blocked = r.random((lq, lk)) < 0.3
    blocked[:, 0] = False
    if masks == "padding":
        pad = r.random((n, lk)) < 0.4
        pad[:, 0] = False
        kw["key_padding_mask"], tkw["key_padding_mask"] = pair(pad)
    elif masks == "bool":
        kw["attn_mask"], tkw["attn_mask"] = pair(blocked)
    elif masks == "float":
        kw["attn_mask"], tkw["attn_mask"] = pair(r.standard_normal((lq, lk)), grad=False)
    elif masks == "per_head":
        kw["attn_mask"], tkw["attn_mask"] = pair(np.broadcast_to(blocked, (n * 2, lq, lk)).copy())
        kw["average_attn_weights"] = tkw["average_attn_weights"] = False
    out, weights = ours(q, k, v, **kw)
    ref, ref_weights = theirs(tq, tk, tv, **tkw)
    close(out, ref)
    close(weights, ref_weights)
    grads_agree(out, ref, [(q, tq), (k, tk), (v, tv)] + list(zip(
        ours.parameters(), theirs.parameters())))


def test_multihead_attention_self_attention_unbatched_and_causal():
    r = np.random.default_rng(4)
    theirs = torch.nn.MultiheadAttention(6, 3, batch_first=True).double()
    ours = load(nn.MultiheadAttention(6, 3, batch_first=True), theirs)
    (x, tx) = pair(r.standard_normal((2, 5, 6)))
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    out, w = ours(x, x, x, is_causal=True)
    ref, tw = theirs(tx, tx, tx, attn_mask=mask, is_causal=True)
    close(out, ref)
    close(w, tw)
    grads_agree(out, ref, [(x, tx)] + list(zip(ours.parameters(), theirs.parameters())))
    (u, tu) = pair(r.standard_normal((5, 6)))
    out, w = ours(u, u, u)
    ref, tw = theirs(tu, tu, tu)
    close(out, ref)
    close(w, tw)
    assert ours(u, u, u, need_weights=False)[1] is None


def test_multihead_attention_init_and_errors():
    shrew.manual_seed(0)
    mha = nn.MultiheadAttention(32, 4, add_bias_kv=True)
    assert np.abs(mha.in_proj_weight.numpy()).max() <= np.sqrt(6 / (32 + 96))
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    assert 0.05 < mha.bias_k.numpy().std() < 0.4
    with pytest.raises(shrew.ShrewError, match="embed_dim 8 must be divisible by num_heads 3"):
        nn.MultiheadAttention(8, 3)
    mha = nn.MultiheadAttention(8, 2)
    with pytest.raises(shrew.ShapeError, match=r"MultiheadAttention: query, key and value must "
                                               r"be \[L, N, E\]"):
        mha(shrew.randn(3, 2, 8), shrew.randn(3, 2, 4), shrew.randn(3, 2, 8))
    with pytest.raises(shrew.ShapeError, match=r"key_padding_mask must be \[2, 3\]"):
        x = shrew.randn(3, 2, 8)
        mha(x, x, x, key_padding_mask=shrew.zeros(3, 2, dtype=shrew.bool))


# -- Transformer layers ---------------------------------------------------------------------------
LAYER_OPTIONS = [
    {}, {"norm_first": True}, {"batch_first": True, "activation": "gelu"},
    {"bias": False}, {"activation": TF.silu},
]


def _inputs(r, batch_first, length, n=2, d=8):
    return pair(r.standard_normal((n, length, d) if batch_first else (length, n, d)))


@pytest.mark.parametrize("options", LAYER_OPTIONS)
@pytest.mark.parametrize("train", [False, True])
def test_encoder_layer_matches_torch(options, train):
    r = np.random.default_rng(5)
    activation = options.get("activation")
    ours_options = {**options, "activation": F.silu} if activation is TF.silu else options
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **options).double()
    ours = load(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **ours_options), theirs)
    ours.train(train), theirs.train(train)
    (x, tx) = _inputs(r, options.get("batch_first", False), 5)
    pad = np.zeros((2, 5), bool)
    pad[1, 3:] = True
    mask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    out = ours(x, src_mask=nn.Transformer.generate_square_subsequent_mask(5, dtype="float64"),
               src_key_padding_mask=shrew.tensor(pad))
    ref = theirs(tx, src_mask=mask, src_key_padding_mask=torch.tensor(pad))
    close(out, ref)
    grads_agree(out, ref, [(x, tx)] + list(zip(ours.parameters(), theirs.parameters())))


@pytest.mark.parametrize("options", LAYER_OPTIONS[:3])
def test_decoder_layer_matches_torch(options):
    r = np.random.default_rng(6)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **options).double()
    ours = load(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **options), theirs)
    bf = options.get("batch_first", False)
    (t, tt), (m, tm) = _inputs(r, bf, 4), _inputs(r, bf, 6)
    mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=shrew.float64)
    out = ours(t, m, tgt_mask=mask)
    ref = theirs(tt, tm, tgt_mask=torch.tensor(mask.numpy()))
    close(out, ref)
    grads_agree(out, ref, [(t, tt), (m, tm)] + list(zip(ours.parameters(),
                                                        theirs.parameters())))


@pytest.mark.parametrize("batch_first", [False, True])
def test_transformer_matches_torch(batch_first):
    r = np.random.default_rng(7)
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first).double()
    ours = load(nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=batch_first), theirs)
    (s, ts), (t, tt) = _inputs(r, batch_first, 6), _inputs(r, batch_first, 4)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(
        mask.numpy(), torch.nn.Transformer.generate_square_subsequent_mask(4).numpy())
    out = ours(s, t, tgt_mask=mask.to(dtype=shrew.float64))
    ref = theirs(ts, tt, tgt_mask=torch.tensor(mask.numpy()).double())
    close(out, ref, 1e-9)
    grads_agree(out, ref, [(s, ts), (t, tt)] + list(zip(ours.parameters(),
                                                        theirs.parameters())))
    ours.eval(), theirs.eval()
    close(ours(s, t), theirs(ts, tt), 1e-9)


def test_transformer_init_and_encoder_stack():
    shrew.manual_seed(0)
    model = nn.Transformer(16, 4, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight.numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (16 + 32))  # xavier-uniform, as PyTorch resets
    layer = nn.TransformerEncoderLayer(8, 2, 16)
    stack = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(8))
    assert len(stack.layers) == 3 and stack.layers[0] is not layer
    assert stack.layers[0].linear1.weight is not stack.layers[1].linear1.weight
    theirs = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(8, 2, 16), 3,
                                         norm=torch.nn.LayerNorm(8), enable_nested_tensor=False)
    assert list(stack.state_dict()) == list(theirs.state_dict())
    with pytest.raises(shrew.ShrewError, match="activation must be 'relu', 'gelu'"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
