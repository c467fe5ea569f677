"""The fixed parts of the C file: the Philox generator numpy's cpu backend draws from,
safetensors reading and writing, and main()."""
from __future__ import annotations

PRELUDE = """\
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef SHREW_USE_CBLAS
#include <cblas.h>
#endif

#define SHREW_MAX_DIMS 8
"""

PHILOX = """\
/* numpy's Philox4x64-10 bit generator, state as exported (numpy.random.Philox) */
static uint64_t shrew_mulhilo(uint64_t a, uint64_t b, uint64_t *hi)
{
    const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32, b_lo = b & 0xffffffffu, b_hi = b >> 32;
    const uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
    const uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffu) + (p2 & 0xffffffffu);
    *hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
    return a * b;
}

static uint64_t shrew_philox_next(void)
{
    uint64_t ctr[4], key[2];
    int r;
    if (shrew_rng.pos < 4) return shrew_rng.buffer[shrew_rng.pos++];
    if (++shrew_rng.counter[0] == 0 && ++shrew_rng.counter[1] == 0 && ++shrew_rng.counter[2] == 0)
        ++shrew_rng.counter[3];
    memcpy(ctr, shrew_rng.counter, sizeof ctr);
    memcpy(key, shrew_rng.key, sizeof key);
    for (r = 0; r < 10; ++r) {
        uint64_t hi0, hi1;
        const uint64_t lo0 = shrew_mulhilo(0xD2E7470EE14C6C93u, ctr[0], &hi0);
        const uint64_t lo1 = shrew_mulhilo(0xCA5A826395121157u, ctr[2], &hi1);
        const uint64_t c0 = hi1 ^ ctr[1] ^ key[0], c2 = hi0 ^ ctr[3] ^ key[1];
        ctr[0] = c0; ctr[1] = lo1; ctr[2] = c2; ctr[3] = lo0;
        key[0] += 0x9E3779B97F4A7C15u; key[1] += 0xBB67AE8584CAA73Bu;
    }
    memcpy(shrew_rng.buffer, ctr, sizeof ctr);
    shrew_rng.pos = 1;
    return shrew_rng.buffer[0];
}
"""

SAFETENSORS = """\
/* safetensors: an 8-byte little-endian header size, a JSON header naming each tensor's
   dtype, shape and [begin, end) byte range in the data that follows.  Read: every
   tensor of the state dict must be there as F32 with its exact shape. */
static int shrew_find_tensor(const char *header, const shrew_tensor_info *t, long *begin,
                             long *end)
{
    char key[256];
    const char *at, *close, *field;
    long shape[SHREW_MAX_DIMS];
    int d, nd = 0;
    if (snprintf(key, sizeof key, "\\"%s\\"", t->name) >= (int)sizeof key) return -1;
    at = strstr(header, key);
    if (!at) return -1;
    close = strchr(at, '}');
    if (!close) return -1;
    field = strstr(at, "\\"dtype\\"");
    if (!field || field > close) return -1;
    field = strstr(field, "\\"F32\\"");
    if (!field || field > close) return -1;
    field = strstr(at, "\\"shape\\"");
    if (!field || field > close || !(field = strchr(field, '['))) return -1;
    for (++field; *field != ']' && nd < SHREW_MAX_DIMS; ) {
        char *next;
        shape[nd++] = strtol(field, &next, 10);
        if (next == field) { --nd; break; }
        field = next;
        while (*field == ',' || *field == ' ') ++field;
    }
    if (nd != t->ndim) return -1;
    for (d = 0; d < nd; ++d) if (shape[d] != t->shape[d]) return -1;
    field = strstr(at, "\\"data_offsets\\"");
    if (!field || field > close || !(field = strchr(field, '['))) return -1;
    if (sscanf(field, "[%ld ,%ld", begin, end) != 2) return -1;
    return *end - *begin == t->numel * 4 ? 0 : -1;
}

int shrew_load_params(const char *path)
{
    FILE *f = fopen(path, "rb");
    unsigned char size_bytes[8];
    uint64_t header_size = 0;
    long file_size, begin[SHREW_TENSORS], end[SHREW_TENSORS];
    char *header;
    int i, status = 0;
    if (!f) return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (file_size = ftell(f)) < 8 || fseek(f, 0, SEEK_SET) != 0
        || fread(size_bytes, 1, 8, f) != 8) { fclose(f); return -1; }
    for (i = 7; i >= 0; --i) header_size = header_size << 8 | size_bytes[i];
    if (header_size > (uint64_t)(file_size - 8)) { fclose(f); return -1; }
    header = (char *)malloc((size_t)header_size + 1);
    if (!header) { fclose(f); return -1; }
    if (fread(header, 1, (size_t)header_size, f) != (size_t)header_size) status = -1;
    header[header_size] = 0;
    /* every tensor is found and checked before any is written: all or nothing */
    for (i = 0; status == 0 && i < SHREW_TENSORS; ++i)
        if (shrew_find_tensor(header, &shrew_tensors[i], &begin[i], &end[i]) != 0 || begin[i] < 0
            || end[i] > file_size - 8 - (long)header_size) status = -1;
    for (i = 0; status == 0 && i < SHREW_TENSORS; ++i)
        if (fseek(f, 8 + (long)header_size + begin[i], SEEK_SET) != 0
            || fread(shrew_arena + shrew_tensors[i].offset, 4, (size_t)shrew_tensors[i].numel, f)
               != (size_t)shrew_tensors[i].numel) status = -1;
    free(header);
    fclose(f);
    return status;
}

int shrew_save_params(const char *path)
{
    FILE *f = fopen(path, "wb");
    char header[SHREW_HEADER_MAX];
    long used = 0, data = 0, padded;
    int i, d, status = 0;
    unsigned char size_bytes[8];
    if (!f) return -1;
    used += snprintf(header + used, sizeof header - (size_t)used, "{");
    for (i = 0; i < SHREW_TENSORS; ++i) {
        const shrew_tensor_info *t = &shrew_tensors[i];
        used += snprintf(header + used, sizeof header - (size_t)used,
                         "%s\\"%s\\":{\\"dtype\\":\\"F32\\",\\"shape\\":[", i ? "," : "", t->name);
        for (d = 0; d < t->ndim; ++d)
            used += snprintf(header + used, sizeof header - (size_t)used, "%s%ld", d ? "," : "",
                             t->shape[d]);
        used += snprintf(header + used, sizeof header - (size_t)used,
                         "],\\"data_offsets\\":[%ld,%ld]}", data, data + t->numel * 4);
        data += t->numel * 4;
    }
    used += snprintf(header + used, sizeof header - (size_t)used, "}");
    padded = (used + 7) / 8 * 8;
    while (used < padded) header[used++] = ' ';
    for (i = 0; i < 8; ++i) size_bytes[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    if (fwrite(size_bytes, 1, 8, f) != 8 || fwrite(header, 1, (size_t)padded, f) != (size_t)padded)
        status = -1;
    for (i = 0; status == 0 && i < SHREW_TENSORS; ++i)
        if (fwrite(shrew_arena + shrew_tensors[i].offset, 4, (size_t)shrew_tensors[i].numel, f)
            != (size_t)shrew_tensors[i].numel) status = -1;
    if (fclose(f) != 0) status = -1;
    return status;
}
"""

MAIN = """\
#ifndef SHREW_NO_MAIN
/* train DATA EPOCHS [INITIAL_PARAMS [TRAINED_PARAMS]]
   DATA: uint64 count, uint64 features, count*features float32 inputs, count int64 labels
   (little-endian).  Trains in file order in batches of the traced size. */
int main(int argc, char **argv)
{
    const char *init = argc > 3 ? argv[3] : SHREW_INIT_PATH;
    const char *out = argc > 4 ? argv[4] : SHREW_TRAINED_PATH;
    uint64_t head[2];
    float *x;
    int64_t *y;
    long count, features, epochs, epoch, start;
    FILE *f;
    if (argc < 3) { fprintf(stderr, "usage: %s DATA EPOCHS [INIT [OUT]]\\n", argv[0]); return 2; }
    epochs = strtol(argv[2], NULL, 10);
    if (shrew_load_params(init) != 0) { fprintf(stderr, "cannot load %s\\n", init); return 1; }
    f = fopen(argv[1], "rb");
    if (!f || fread(head, 8, 2, f) != 2) {
        fprintf(stderr, "cannot read %s\\n", argv[1]);
        return 1;
    }
    count = (long)head[0];
    features = (long)head[1];
    if (features != SHREW_FEATURES || count < 0 || count > (1L << 40) / (features * 4 + 8)) {
        fprintf(stderr, "%s: expected %d features per sample\\n", argv[1], SHREW_FEATURES);
        return 1;
    }
    x = (float *)malloc(sizeof(float) * (size_t)(count * features + 1));
    y = (int64_t *)malloc(sizeof(int64_t) * (size_t)(count + 1));
    if (!x || !y
        || fread(x, sizeof(float), (size_t)(count * features), f) != (size_t)(count * features)
        || fread(y, sizeof(int64_t), (size_t)count, f) != (size_t)count) {
        fprintf(stderr, "%s is truncated\\n", argv[1]);
        return 1;
    }
    fclose(f);
    for (epoch = 0; epoch < epochs; ++epoch) {
        double total = 0.0;
        long seen = 0;
        for (start = 0; start < count; start += SHREW_BATCH) {
            const long b = count - start < SHREW_BATCH ? count - start : SHREW_BATCH;
            float loss;
            if (b < SHREW_MIN_BATCH) continue;
            loss = shrew_train_step(x + start * features, y + start, (int)b);
            if (loss != loss) { fprintf(stderr, "step failed (bad labels?)\\n"); return 1; }
            total += (double)loss * (double)b;
            seen += b;
        }
        printf("epoch %ld loss %.6f\\n", epoch + 1, seen ? total / (double)seen : 0.0);
    }
    free(x);
    free(y);
    if (shrew_save_params(out) != 0) { fprintf(stderr, "cannot write %s\\n", out); return 1; }
    return 0;
}
#endif
"""
