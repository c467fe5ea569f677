"""Program: the traced step, its memory plan, and the C file written from them."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import safetensors.numpy

from ..core.errors import ArgumentError
from . import runtime
from .emit import Emitter
from .graph import Graph, Value
from .plan import Plan
from .symbolic import at, c_int


@dataclass
class OptimizerSpec:
    """The update the step ends with: kind (sgd, adam, adamw) and its hyperparameters
    per parameter."""

    kind: str
    groups: list[dict[str, Any] | None]  # per parameter: its group (lr, betas, ...) or None


@dataclass
class Program:
    """A traced training step, ready to write as C."""

    graph: Graph
    plan: Plan
    params: list[tuple[str, Value]]  # the state dict: parameters then module buffers
    trainable: list[tuple[str, Value, Value | None]]  # (name, parameter, gradient or None)
    opt_state: dict[str, list[Value]]  # parameter name -> its optimizer state buffers
    optimizer: OptimizerSpec
    x: Value
    y: Value
    loss: Value
    batch_size: int
    min_batch: int  # == batch_size when the step only runs at the traced batch
    fixed_batch_reason: str | None
    initial_state: dict[str, np.ndarray]
    rng_state: dict[str, Any] | None
    eager_peak_bytes: int | None = None

    @property
    def memory(self) -> dict[str, int | None]:
        """Bytes: the arena (persistent + planned temporaries), the temporaries after
        reuse, all temporaries each in its own memory, and eager shrew's measured peak
        of the same step (allocations above the model and optimizer already held)."""
        return {"arena": self.plan.arena_bytes, "persistent": self.plan.persistent_bytes,
                "temporaries": self.plan.temp_bytes,
                "temporaries_without_reuse": self.plan.temp_sum_bytes,
                "eager_peak": self.eager_peak_bytes}

    def write_c(self, path: str | os.PathLike[str]) -> str:
        """Write the step as one C99 file, and beside it `<stem>_init.safetensors`
        (the initial parameters that main() loads).  Returns the C file's path."""
        path = os.fspath(path)
        stem = os.path.splitext(path)[0]
        source = self.c_source(os.path.basename(stem) + "_init.safetensors",
                               os.path.basename(stem) + "_trained.safetensors")
        safetensors.numpy.save_file(
            {name: np.ascontiguousarray(a, dtype=np.float32)
             for name, a in self.initial_state.items()}, stem + "_init.safetensors")
        with open(path, "w") as f:
            f.write(source)
        return path

    # -- C ---------------------------------------------------------------------------------
    def _ptr(self, v: Value) -> str:
        off = self.plan.offset(v)
        extra = "" if v.offset == 0 else f" + {c_int(v.offset)}"
        return f"((({v.ctype} *)(shrew_arena + {off})){extra})"

    def emit_step(self) -> tuple[Emitter, list[str]]:
        """The kernels and one C call per node; raises ShrewError for a node that has no C
        emitter (trace_training runs it, so that nothing unsupported gets further)."""
        em = Emitter(self._ptr, self.batch_size)
        return em, [em.call(node) for node in self.graph.nodes]

    def c_source(self, init_path: str, trained_path: str) -> str:
        em, body = self.emit_step()
        uses_rand = "shrew_rand" in em.kernels
        parts = [f"/* A training step exported by shrew.export: {len(self.graph.nodes)} "
                 f"kernel calls, batch {self.min_batch}..{self.batch_size}, arena "
                 f"{self.plan.arena_bytes} bytes.  Build: cc -O2 -std=c99 train.c -lm */",
                 runtime.PRELUDE, self._defines(init_path, trained_path)]
        if uses_rand:
            parts.append(self._rng_state())
            parts.append(runtime.PHILOX)
        parts += list(em.helpers.values()) + list(em.kernels.values())
        parts.append(runtime.SAFETENSORS)
        parts.append(self._step(body))
        parts.append(self._debug())
        parts.append(runtime.MAIN)
        return "\n".join(parts)

    def _defines(self, init_path: str, trained_path: str) -> str:
        lines = [f"#define SHREW_BATCH {self.batch_size}",
                 f"#define SHREW_MIN_BATCH {self.min_batch}",
                 f"#define SHREW_FEATURES {int(np.prod([at(s, 1) for s in self.x.shape[1:]]))}",
                 f"#define SHREW_TENSORS {len(self.params)}",
                 f"#define SHREW_ARENA_BYTES {self.plan.arena_bytes}L",
                 f"#define SHREW_INIT_PATH {_c_string(init_path)}",
                 f"#define SHREW_TRAINED_PATH {_c_string(trained_path)}",
                 "/* one static arena: every tensor is an offset into it (double: aligned) */",
                 "static double shrew_arena_storage[(SHREW_ARENA_BYTES + 7) / 8 + 1];",
                 "#define shrew_arena ((unsigned char *)shrew_arena_storage)",
                 "static long shrew_step_count; /* optimizer steps taken */",
                 "static long shrew_n = SHREW_BATCH; /* the batch of the running step */",
                 "typedef struct { const char *name; long offset; int ndim; "
                 "long shape[SHREW_MAX_DIMS]; long numel; } shrew_tensor_info;",
                 "static const shrew_tensor_info shrew_tensors[SHREW_TENSORS] = {"]
        header = 2
        for name, v in self.params:
            shape = [at(s, self.batch_size) for s in v.shape]
            dims = ", ".join(map(str, shape)) or "0"
            lines.append(f"    {{{_c_string(name)}, {self.plan.offset(v)}, {len(shape)}, "
                         f"{{{dims}}}, {int(np.prod(shape))}}},")
            header += len(name) + 80 + 22 * len(shape)
        lines.append("};")
        lines.append(f"#define SHREW_HEADER_MAX {header + 64}")
        consts = [b for b in self.graph.buffers if b.kind == "const"]
        lines.append("static int shrew_ready;")
        for i, b in enumerate(consts):
            assert b.data is not None
            data = ", ".join(str(x) for x in b.data.tobytes()) or "0"
            lines.append(f"static const unsigned char shrew_const{i}[] = {{{data}}};")
        lines.append("static void shrew_init(void)\n{")
        for i, b in enumerate(consts):
            lines.append(f"    memcpy(shrew_arena + {self.plan.offsets[id(b)]}, shrew_const{i}, "
                         f"{b.data.nbytes if b.data is not None else 0});")
        lines.append("    shrew_ready = 1;\n}")
        return "\n".join(lines) + "\n"

    def _rng_state(self) -> str:
        s = self.rng_state
        if s is None or s.get("bit_generator") != "Philox":
            raise ArgumentError("export: the step draws random numbers, but the cpu generator is "
                                "not numpy's Philox")
        inner = s["state"]

        def u64(values: Any) -> str:
            return ", ".join(f"{int(v)}u" for v in values)
        return ("static struct { uint64_t counter[4], key[2], buffer[4]; int pos; } shrew_rng = "
                f"{{{{{u64(inner['counter'])}}}, {{{u64(inner['key'])}}}, "
                f"{{{u64(s['buffer'])}}}, {int(s['buffer_pos'])}}};\n")

    def _step(self, body: list[str]) -> str:
        x_numel = c_int(self.x.numel())
        y_numel = c_int(self.y.numel())
        lines = ["float shrew_train_step(const float *x, const int64_t *y, int batch)\n{",
                 "    long i;",
                 "    if (batch < SHREW_MIN_BATCH || batch > SHREW_BATCH) return NAN;",
                 "    shrew_n = batch;",
                 "    if (!shrew_ready) shrew_init();",
                 f"    for (i = 0; i < {y_numel}; ++i) "
                 f"if (y[i] < 0 || y[i] >= {self._label_bound()}) return NAN;",
                 f"    memcpy({self._ptr(self.x)}, x, sizeof(float) * (size_t){x_numel});",
                 f"    memcpy({self._ptr(self.y)}, y, sizeof(int64_t) * (size_t){y_numel});"]
        lines += ["    " + line for line in body]
        lines += self._optimizer()
        lines.append("    shrew_step_count += 1;")
        lines.append(f"    return *{self._ptr(self.loss)};\n}}")
        return "\n".join(lines) + "\n"

    def _label_bound(self) -> str:
        """The number of classes: the size of the dim the labels index (gather)."""
        for node in self.graph.nodes:
            if node.kind == "gather" and self.plan.resolve(node.inputs[1].buffer) is \
                    self.plan.resolve(self.y.buffer):
                return c_int(node.inputs[0].shape[node.params["dim"]])
        return "INT64_MAX"

    def _optimizer(self) -> list[str]:
        lines = []
        kind = self.optimizer.kind
        for (name, p, grad), hyper in zip(self.trainable, self.optimizer.groups):
            if grad is None or hyper is None:
                continue
            numel = c_int(p.numel())
            st = self.opt_state.get(name, [])
            lines.append(f"    {{ /* {kind} update of {name} */")
            lines.append(f"        float *p = {self._ptr(p)};")
            lines.append(f"        const float *g = {self._ptr(grad)};")
            wd, lr = hyper["weight_decay"], hyper["lr"]
            if kind == "sgd":
                mom = hyper["momentum"]
                if mom:
                    lines.append(f"        float *buf = {self._ptr(st[0])};")
                lines.append(f"        for (i = 0; i < {numel}; ++i) {{")
                lines.append("            float d = g[i];")
                if wd:
                    lines.append(f"            d = d + p[i] * (float){wd!r};")
                if mom:
                    lines.append(f"            if (shrew_step_count > 0) d = buf[i] * "
                                 f"(float){mom!r} + d;")
                    lines.append("            buf[i] = d;")
                lines.append(f"            p[i] = p[i] + d * (float){-lr!r};")
                lines.append("        }")
            else:
                b1, b2 = hyper["betas"]
                lines.append(f"        float *m = {self._ptr(st[0])}, *v = {self._ptr(st[1])};")
                lines.append("        const double t = (double)(shrew_step_count + 1);")
                lines.append(f"        const float bc2 = (float)sqrt(1.0 - pow({b2!r}, t));")
                lines.append(f"        const float step = "
                             f"(float)({-lr!r} / (1.0 - pow({b1!r}, t)));")
                lines.append(f"        for (i = 0; i < {numel}; ++i) {{")
                lines.append("            float gi = g[i];")
                if wd and kind == "adamw":
                    lines.append(f"            p[i] = p[i] + p[i] * (float){-lr * wd!r};")
                elif wd:
                    lines.append(f"            gi = gi + p[i] * (float){wd!r};")
                lines.append(f"            m[i] = m[i] * (float){b1!r} + gi * (float){1.0 - b1!r};")
                lines.append(f"            v[i] = v[i] * (float){b2!r} + (gi * gi) * "
                             f"(float){1.0 - b2!r};")
                lines.append(f"            p[i] = p[i] + (m[i] / (sqrtf(v[i]) / bc2 + "
                             f"(float){hyper['eps']!r})) * step;")
                lines.append("        }")
            lines.append("    }")
        return lines

    def _debug(self) -> str:
        """shrew_debug_grad(i, out): the last step's gradient of trainable parameter i
        (in named_parameters order) copied to out; its element count, or -1."""
        lines = ["long shrew_debug_grad(int i, float *out)\n{", "    switch (i) {"]
        for k, (_, p, grad) in enumerate(self.trainable):
            if grad is None:
                continue
            numel = c_int(p.numel())
            lines.append(f"    case {k}: if (out) memcpy(out, {self._ptr(grad)}, sizeof(float) * "
                         f"(size_t){numel}); return {numel};")
        lines += ["    default: return -1;", "    }", "}"]
        return "\n".join(lines) + "\n"


def _c_string(s: str) -> str:
    if not s.isprintable() or any(c in s for c in '"\\'):
        raise ArgumentError(f"export: name {s!r} cannot be written as a C string")
    return f'"{s}"'
