"""The training workloads as tinygrad steps, written functionally over the problem's
parameter dict (the same computation as shrew_steps).  The step is wrapped in TinyJit, the
way tinygrad's own training examples run, so its kernels are captured once and replayed.
tinygrad picks its device from the DEV environment variable (DEV=CL) at import."""
from __future__ import annotations

from tinygrad import Context, Tensor, TinyJit
from tinygrad.nn.optim import SGD

from workloads import LEARNING_RATE


def _linear(x, p, name):
    return x.linear(p[f"{name}.weight"].T, p[f"{name}.bias"])


def _layer_norm(x, p, name):
    return x.layernorm(eps=1e-5) * p[f"{name}.weight"] + p[f"{name}.bias"]


def _mlp(p, x, y):
    h = _linear(_linear(x, p, "0").relu(), p, "2").relu()
    return _linear(h, p, "4").sparse_categorical_crossentropy(y)


def _cnn(p, x, y):
    h = x.conv2d(p["0.weight"], p["0.bias"], padding=2).relu().max_pool2d(2)
    h = h.conv2d(p["3.weight"], p["3.bias"], padding=2).relu().max_pool2d(2)
    return _linear(h.flatten(1), p, "7").sparse_categorical_crossentropy(y)


def _block(x, p, prefix, heads):
    batch, length, dim = x.shape
    qkv = _layer_norm(x, p, f"{prefix}.ln1").linear(p[f"{prefix}.attn.in_proj_weight"].T,
                                                    p[f"{prefix}.attn.in_proj_bias"])
    q, k, v = (t.reshape(batch, length, heads, -1).transpose(1, 2) for t in qkv.chunk(3, dim=-1))
    attn = q.scaled_dot_product_attention(k, v, is_causal=True)
    x = x + _linear(attn.transpose(1, 2).reshape(batch, length, dim), p, f"{prefix}.attn.out_proj")
    h = _linear(_layer_norm(x, p, f"{prefix}.ln2"), p, f"{prefix}.mlp.0").gelu()
    return x + _linear(h, p, f"{prefix}.mlp.2")


def _transformer(config):
    def loss_fn(p, tokens, targets):
        x = p["embed.weight"][tokens]
        for b in range(config["blocks"]):
            x = _block(x, p, f"blocks.{b}", config["heads"])
        logits = _linear(_layer_norm(x, p, "ln_f"), p, "head")
        return logits.reshape(-1, config["vocab"]).sparse_categorical_crossentropy(
            targets.reshape(-1))
    return loss_fn


def build(name: str, problem):
    losses = {"mlp_step": _mlp, "cnn_step": _cnn}
    loss_fn = _transformer(problem.config) if name == "transformer_step" else losses[name]
    params = {k: Tensor(v) for k, v in problem.params.items()}
    inputs = {k: Tensor(v.astype(v.dtype if v.dtype.kind == "f" else "int32"))
              for k, v in problem.inputs.items()}
    opt = SGD(list(params.values()), lr=LEARNING_RATE)

    @TinyJit
    def jitted():
        opt.zero_grad()
        loss = loss_fn(params, **inputs)
        loss.backward()
        # Realized together with the update, so that the loss is that of the weights before it.
        Tensor.realize(loss, *opt.schedule_step())
        return loss

    def step():
        with Context(TRAINING=1):
            return jitted().item()
    return step

