/* A numpy memory handler that serves a replay's arrays from one static arena.

   numpy takes every array's memory from the handler current in the calling context
   (PyDataMem_SetHandler, NEP 49), and each array keeps a reference to the handler that
   made it, so that its memory goes back through that handler's free.  A replay of a
   captured program allocates the same sizes in the same order every time, so:

   - two recording replays note each allocation's size and when it was freed;
   - arena.py places the allocations of the first that were freed before the second began
     (its temporaries, and the .grad arrays a step leaves until the next drops them) in
     one arena by their lifetimes (the placement of shrew.export's memory plan);
   - a serving replay hands allocation i the planned block at base + offset[i], provided
     the size is the planned one and no block still in use overlaps it; anything else
     (an escaping block, a size or order the plan did not see, a block kept past its
     planned lifetime by someone) comes from the handler the arena was made under
     (numpy's own), so a wrong plan costs memory, never correctness.

   The handler's capsule owns the arena: it is freed once the program and every array
   made from it are gone.  Calls come with the GIL held (numpy allocates array data under
   it), which serialises them. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { IDLE, RECORDING, SERVING };

typedef struct { char *at; int64_t size; } Block;
typedef struct { int64_t size, born, died; void *where; } Allocation;  /* died -1: alive;
                                                        size -1: a replay starts at born */

typedef struct {
    PyDataMem_Handler handler;   /* first: the capsule's pointer is the arena's too */
    PyDataMemAllocator other;    /* the handler it was made under (numpy's, with its cache
                                    of small blocks): everything the arena does not serve */
    PyObject *other_capsule;
    int mode;
    /* recording: each allocation, timed by a clock that ticks at every allocation and
       free, so that two replays of the same program keep the same time */
    Allocation *seen; Py_ssize_t count, room;
    Py_ssize_t *alive; Py_ssize_t alive_count, alive_room;   /* indices into seen */
    int64_t clock, smallest;                  /* smaller allocations are not recorded */
    /* serving: the plan, per allocation its offset (-1: the other handler's) and size */
    char *base; int64_t capacity;
    int64_t *offset, *planned; Py_ssize_t planned_count, next;
    Block *live; Py_ssize_t live_count, live_room;               /* arena blocks in use */
    int64_t served, missed, passed;   /* bytes: from the arena; planned there but from the
                                         other handler; planned for the other handler */
} Arena;

/* Whether the plan takes allocations of `size` bytes: not the smallest, nor empty ones
   (two live blocks at one address would make a free ambiguous). */
static int planned_size(Arena *a, size_t size)
{
    return size > 0 && (int64_t)size >= a->smallest;
}

static int grow(void **array, Py_ssize_t *room, Py_ssize_t need, size_t item)
{
    if (need <= *room) return 0;
    Py_ssize_t to = *room ? *room * 2 : 256;
    while (to < need) to *= 2;
    void *p = realloc(*array, (size_t)to * item);
    if (!p) return -1;
    *array = p; *room = to;
    return 0;
}

/* Note an allocation (p NULL: the start of a replay, recorded with size 0). */
static void record(Arena *a, void *p, size_t size)
{
    int64_t now = a->clock++;
    if (a->count < 0 || (p && !planned_size(a, size))) return;
    if (grow((void **)&a->seen, &a->room, a->count + 1, sizeof(Allocation))
        || grow((void **)&a->alive, &a->alive_room, a->alive_count + 1, sizeof(Py_ssize_t))) {
        a->count = -1;                               /* out of memory: no plan */
        return;
    }
    a->seen[a->count] = (Allocation){(int64_t)size, now, -1, p};
    if (p) a->alive[a->alive_count++] = a->count;
    a->count++;
}

static void record_free(Arena *a, void *p)
{
    int64_t now = a->clock++;
    if (a->count < 0) return;
    for (Py_ssize_t k = 0; k < a->alive_count; ++k) {
        Allocation *seen = &a->seen[a->alive[k]];
        if (seen->where == p) {
            seen->died = now;
            seen->where = NULL;
            a->alive[k] = a->alive[--a->alive_count];
            return;
        }
    }
}

static int in_arena(Arena *a, void *p)
{
    return a->base && (char *)p >= a->base && (char *)p < a->base + a->capacity;
}

/* The planned block for the next allocation of `size` bytes, or NULL (counted). */
static void *serve(Arena *a, size_t size)
{
    if (!planned_size(a, size)) {                     /* never recorded: not planned */
        a->passed += (int64_t)size;
        return NULL;
    }
    Py_ssize_t i = a->next++;
    if (i >= a->planned_count || a->planned[i] != (int64_t)size) {
        a->missed += (int64_t)size;        /* more allocations, or a size the data decides */
        return NULL;
    }
    int64_t off = a->offset[i];
    if (off < 0) { a->passed += (int64_t)size; return NULL; }
    char *at = a->base + off;
    for (Py_ssize_t i = 0; i < a->live_count; ++i)
        if (a->live[i].at < at + size && at < a->live[i].at + a->live[i].size) {
            a->missed += (int64_t)size;              /* its block is still held */
            return NULL;
        }
    if (grow((void **)&a->live, &a->live_room, a->live_count + 1, sizeof(Block))) {
        a->missed += (int64_t)size;
        return NULL;
    }
    a->live[a->live_count++] = (Block){at, (int64_t)size};
    a->served += (int64_t)size;
    return at;
}

static int64_t release(Arena *a, void *p)   /* the block's size */
{
    for (Py_ssize_t i = 0; i < a->live_count; ++i)
        if (a->live[i].at == p) {
            int64_t size = a->live[i].size;
            a->live[i] = a->live[--a->live_count];
            return size;
        }
    return 0;
}

static void *arena_malloc(void *ctx, size_t size)
{
    Arena *a = ctx;
    void *p = a->mode == SERVING ? serve(a, size) : NULL;
    if (p) return p;
    p = a->other.malloc(a->other.ctx, size);
    if (p && a->mode == RECORDING) record(a, p, size);
    return p;
}

static void *arena_calloc(void *ctx, size_t count, size_t item)
{
    Arena *a = ctx;
    size_t size = count * item;
    if (item && size / item != count) return NULL;
    void *p = a->mode == SERVING ? serve(a, size) : NULL;
    if (p) return memset(p, 0, size);
    p = a->other.calloc(a->other.ctx, count, item);
    if (p && a->mode == RECORDING) record(a, p, size);
    return p;
}

static void arena_free(void *ctx, void *p, size_t size)
{
    Arena *a = ctx;
    if (!p) return;
    if (in_arena(a, p)) { release(a, p); return; }
    if (a->mode == RECORDING) record_free(a, p);
    a->other.free(a->other.ctx, p, size);
}

static void *arena_realloc(void *ctx, void *p, size_t size)
{
    Arena *a = ctx;
    if (p && in_arena(a, p)) {        /* out of the arena, into the other handler's memory */
        int64_t old = release(a, p);
        void *q = a->other.malloc(a->other.ctx, size ? size : 1);
        if (q) memcpy(q, p, (size_t)old < size ? (size_t)old : size);
        return q;
    }
    if (a->mode == RECORDING && p) record_free(a, p);
    void *q = a->other.realloc(a->other.ctx, p, size);
    if (q && a->mode == RECORDING) record(a, q, size);
    return q;
}

static void destroy(PyObject *capsule)
{
    Arena *a = PyCapsule_GetPointer(capsule, "mem_handler");
    if (!a) return;
    free(a->seen); free(a->alive);
    Py_XDECREF(a->other_capsule);
    free(a->offset); free(a->planned); free(a->live); free(a->base);
    free(a);
}

static Arena *arena_of(PyObject *capsule)
{
    Arena *a = PyCapsule_GetPointer(capsule, "mem_handler");
    if (a && a->handler.allocator.malloc != arena_malloc) {
        PyErr_SetString(PyExc_TypeError, "not a shrew arena");
        return NULL;
    }
    return a;
}

/* new(smallest) -> a handler capsule, recording the allocations of `smallest` bytes or
   more from its first use. */
static PyObject *arena_new(PyObject *self, PyObject *smallest)
{
    long long below = PyLong_AsLongLong(smallest);
    if (below == -1 && PyErr_Occurred()) return NULL;
    PyObject *other = PyDataMem_GetHandler();
    if (!other) return NULL;
    PyDataMem_Handler *handler = PyCapsule_GetPointer(other, "mem_handler");
    Arena *a = handler ? calloc(1, sizeof(Arena)) : NULL;
    if (!a) {
        Py_DECREF(other);
        return handler ? PyErr_NoMemory() : NULL;
    }
    a->other = handler->allocator;
    a->other_capsule = other;
    a->smallest = below;
    strcpy(a->handler.name, "shrew_arena");
    a->handler.version = 1;
    a->handler.allocator = (PyDataMemAllocator){a, arena_malloc, arena_calloc, arena_realloc,
                                                 arena_free};
    a->mode = RECORDING;
    PyObject *capsule = PyCapsule_New(a, "mem_handler", destroy);
    if (!capsule) { Py_DECREF(other); free(a); }
    return capsule;
}

/* use(handler) -> the handler it replaces, for restore: set numpy's handler for this
   context, and start a replay (the plan from its first allocation). */
static PyObject *arena_use(PyObject *self, PyObject *capsule)
{
    Arena *a = arena_of(capsule);
    if (!a) return NULL;
    a->next = 0;
    if (a->mode == RECORDING && a->count >= 0) {             /* the replay's start */
        record(a, NULL, 0);
        if (a->count > 0) a->seen[a->count - 1].size = -1;
    }
    return PyDataMem_SetHandler(capsule);
}

static PyObject *arena_restore(PyObject *self, PyObject *old)
{
    PyObject *mine = PyDataMem_SetHandler(old);
    if (!mine) return NULL;
    Py_DECREF(mine);
    Py_RETURN_NONE;
}

/* recorded(handler) -> the allocations seen, as bytes of int64 (size, born, died, and a
   pointer, four per allocation; a size of -1 marks the start of a replay), and recording
   stops. */
static PyObject *arena_recorded(PyObject *self, PyObject *capsule)
{
    Arena *a = arena_of(capsule);
    if (!a) return NULL;
    if (a->mode != RECORDING) { PyErr_SetString(PyExc_RuntimeError, "not recording"); return NULL; }
    a->mode = IDLE;
    if (a->count < 0) return PyErr_NoMemory();
    return PyBytes_FromStringAndSize((char *)a->seen, a->count * (Py_ssize_t)sizeof(Allocation));
}

/* plan(handler, offsets, sizes, capacity): serve from now on (offsets and sizes as bytes
   of int64, one per allocation recorded in the first replay; offset -1: not in the
   arena). */
static PyObject *arena_plan(PyObject *self, PyObject *args)
{
    PyObject *capsule; Py_buffer offsets, sizes; long long capacity;
    if (!PyArg_ParseTuple(args, "Oy*y*L", &capsule, &offsets, &sizes, &capacity)) return NULL;
    Arena *a = arena_of(capsule);
    PyObject *result = NULL;
    if (!a) goto done;
    if (a->mode != IDLE || a->base || offsets.len != sizes.len) {
        PyErr_SetString(PyExc_RuntimeError, "plan: the arena is not waiting for a plan");
        goto done;
    }
    a->planned_count = offsets.len / (Py_ssize_t)sizeof(int64_t);
    a->offset = malloc(offsets.len + 8); a->planned = malloc(sizes.len + 8);
    if (capacity > 0 && posix_memalign((void **)&a->base, 4096, (size_t)capacity)) a->base = NULL;
    if (!a->offset || !a->planned || (capacity > 0 && !a->base)) { PyErr_NoMemory(); goto done; }
    memcpy(a->offset, offsets.buf, offsets.len); memcpy(a->planned, sizes.buf, sizes.len);
    a->capacity = capacity;
    a->mode = SERVING;
    result = Py_None; Py_INCREF(result);
done:
    PyBuffer_Release(&offsets); PyBuffer_Release(&sizes);
    return result;
}

/* stats(handler) -> (capacity, served, missed, passed, blocks in use): the bytes since
   the plan served from the arena, planned there but taken from the other handler (the
   plan was left, or the block was still held), and planned for the other handler. */
static PyObject *arena_stats(PyObject *self, PyObject *capsule)
{
    Arena *a = arena_of(capsule);
    if (!a) return NULL;
    return Py_BuildValue("(LLLLn)", (long long)a->capacity, (long long)a->served,
                         (long long)a->missed, (long long)a->passed, a->live_count);
}

static PyMethodDef methods[] = {
    {"new", arena_new, METH_O, NULL},
    {"use", arena_use, METH_O, NULL},
    {"restore", arena_restore, METH_O, NULL},
    {"recorded", arena_recorded, METH_O, NULL},
    {"plan", arena_plan, METH_VARARGS, NULL},
    {"stats", arena_stats, METH_O, NULL},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, MODULE_NAME, NULL, -1, methods};

PyMODINIT_FUNC MODULE_INIT(void)
{
    import_array();
    return PyModule_Create(&def);
}
