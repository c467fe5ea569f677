"""shrew.utils.data: datasets, samplers, default_collate and the DataLoader (with worker
processes), against torch.utils.data where the behaviour is deterministic."""
from __future__ import annotations

import collections
import os
import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
import pytest

import shrew
from shrew.utils.data import (BatchSampler, ConcatDataset, DataLoader, DataLoaderWorkerError,
                              Dataset, IterableDataset, RandomSampler, SequentialSampler,
                              Subset, SubsetRandomSampler, TensorDataset,
                              WeightedRandomSampler, default_collate, get_worker_info,
                              random_split)

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = collections.namedtuple("Point", "x y")


class Squares(Dataset):
    """Sample i: a dict of an int, a float, a string, a numpy array and a tuple."""

    def __init__(self, n: int, lib=np):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return {"i": i, "sq": float(i * i), "name": f"s{i}",
                "vec": np.full(3, i, dtype=np.float32), "pair": (i, [i + 0.5, -i])}


def _plain(x):
    """Any collated structure, shrew's or torch's, as plain Python for comparing."""
    if isinstance(x, (shrew.Tensor, torch.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], x.tolist())
    if isinstance(x, np.ndarray):
        return ("array", str(x.dtype), x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[_plain(v) for v in x])
    if isinstance(x, (list, tuple)):
        return [type(x).__name__, *[_plain(v) for v in x]]
    return x


@pytest.mark.parametrize("batch", [
    [1, 2, 3], [0.5, 1.5], [True, False], ["a", "b"], [b"x", b"y"],
    [np.float64(1.5), np.float64(2.0)], [np.int32(3), np.int32(4)],
    [np.ones((2, 3), dtype=np.float32), np.zeros((2, 3), dtype=np.float32)],
    [(1, "a", 2.0), (3, "b", 4.0)], [[1, 2], [3, 4]],
    [{"a": 1, "b": [1.0, 2.0]}, {"a": 2, "b": [3.0, 4.0]}],
    [Point(1, 2.0), Point(3, 4.0)],
    [collections.OrderedDict(z=1, a=2.0), collections.OrderedDict(z=3, a=4.0)],
])
def test_default_collate_matches_torch(batch):
    assert _plain(default_collate(batch)) == _plain(tdata.default_collate(batch))


def test_default_collate_stacks_tensors_and_keeps_their_dtype():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3)) for _ in range(4)]
    ours = default_collate([shrew.tensor(a) for a in arrays])
    theirs = tdata.default_collate([torch.tensor(a) for a in arrays])
    assert ours.shape == tuple(theirs.shape) and ours.dtype == shrew.float64
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("batch, error, message", [
    ([[1, 2], [3]], shrew.ShrewError, "each element in list of batch should be of equal size"),
    ([object(), object()], TypeError, "found object"),
    ([np.array(["a"]), np.array(["b"])], TypeError, "numpy dtype <U1"),
    ([shrew.ones(2), shrew.ones(3)], shrew.ShapeError,
     r"cannot stack samples of different shapes \[2\], \[3\]"),
])
def test_default_collate_refuses_what_it_cannot_join(batch, error, message):
    with pytest.raises(error, match=message):
        default_collate(batch)


@pytest.mark.parametrize("batch_size, drop_last", [(1, False), (3, False), (3, True), (7, True),
                                                   (None, False)])
def test_sequential_batches_match_torch(batch_size, drop_last):
    ours = DataLoader(Squares(7), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(Squares(7), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]


def test_batch_sampler_and_sampler_arguments_match_torch():
    batches = [[3, 1], [0], [6, 5, 4]]
    ours = DataLoader(Squares(7), batch_sampler=batches)
    theirs = tdata.DataLoader(Squares(7), batch_sampler=batches)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    order = [6, 0, 5, 1]
    ours = DataLoader(Squares(7), sampler=order, batch_size=3)
    theirs = tdata.DataLoader(Squares(7), sampler=order, batch_size=3)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert list(BatchSampler(SequentialSampler(range(5)), 2, False)) == list(
        tdata.BatchSampler(tdata.SequentialSampler(range(5)), 2, False))
    assert len(BatchSampler(range(5), 2, True)) == 2


def _labels(loader):
    return [b["i"].tolist() for b in loader]


@pytest.mark.timeout(240)
def test_the_same_seed_gives_the_same_batches_whatever_num_workers():
    runs = []
    for workers in (0, 1, 3):
        loader = DataLoader(Squares(23), batch_size=4, shuffle=True, num_workers=workers,
                            generator=shrew.Generator().manual_seed(7))
        runs.append([_labels(loader), _labels(loader)])  # two epochs
    assert runs[0] == runs[1] == runs[2]
    first, second = runs[0]
    assert first != second  # each epoch reshuffles
    assert sorted(sum(first, [])) == list(range(23))
    for workers in (0, 2):  # shrew.manual_seed governs loaders without a generator
        shrew.manual_seed(3)
        a = _labels(DataLoader(Squares(10), batch_size=3, shuffle=True, num_workers=workers))
        shrew.manual_seed(3)
        b = _labels(DataLoader(Squares(10), batch_size=3, shuffle=True))
        assert a == b


class WhoFetched(Dataset):
    """Each sample says which worker made it, its seed and what worker_init_fn set."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"worker": -1 if info is None else info.id,
                "seed": -1 if info is None else info.seed % 1000,
                "init": os.environ.get("SHREW_TEST_INIT", ""),
                "draw": shrew.rand(1).item(), "pid": os.getpid()}


def _set_init(worker_id):
    os.environ["SHREW_TEST_INIT"] = f"init{worker_id}"


@pytest.mark.timeout(240)
def test_workers_see_their_info_seed_and_init_fn():
    loader = DataLoader(WhoFetched(), batch_size=2, num_workers=2, worker_init_fn=_set_init,
                        persistent_workers=True, prefetch_factor=1)
    for _ in range(2):
        batches = list(loader)
        assert [b["worker"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
        assert [b["init"] for b in batches] == [["init0"] * 2, ["init1"] * 2] * 2
        assert all(pid != os.getpid() for b in batches for pid in b["pid"].tolist())
    pids = {pid for b in batches for pid in b["pid"].tolist()}
    assert len(pids) == 2 and loader._pool is not None and loader._pool.alive()
    seeds = {b["seed"].tolist()[0] for b in batches}
    assert len(seeds) == 2  # each worker is seeded differently
    assert get_worker_info() is None and list(DataLoader(WhoFetched(), batch_size=8))[0][
        "worker"].tolist() == [-1] * 8


class _Counting:
    """0..n-1 split between workers by get_worker_info, as PyTorch's docs suggest."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        mine = isinstance(self, IterableDataset)
        info = get_worker_info() if mine else tdata.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))

    def __len__(self):
        return self.n


class Counting(_Counting, IterableDataset):
    pass


class TorchCounting(_Counting, tdata.IterableDataset):
    pass


@pytest.mark.timeout(240)
@pytest.mark.parametrize("workers, batch_size, drop_last", [(0, 3, False), (2, 3, False),
                                                            (2, 2, True), (2, None, False)])
def test_iterable_datasets_batch_like_torch(workers, batch_size, drop_last):
    ours = DataLoader(Counting(11), batch_size=batch_size, drop_last=drop_last,
                      num_workers=workers)
    theirs = tdata.DataLoader(TorchCounting(11), batch_size=batch_size, drop_last=drop_last,
                              num_workers=workers)
    assert [_plain(b) for b in ours] == [_plain(b) for b in theirs]
    assert len(ours) == len(theirs)


class Failing(Dataset):
    def __init__(self, how):
        self.how = how

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            if self.how == "raise":
                raise KeyError(f"no sample {i}")
            if self.how == "die":
                os._exit(7)
            time.sleep(30)
        return i


@pytest.mark.timeout(120)
def test_an_exception_in_a_worker_is_raised_here_with_its_traceback():
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 1") as err:
        list(DataLoader(Failing("raise"), batch_size=2, num_workers=2))
    assert "no sample 3" in str(err.value) and "Traceback" in str(err.value)


@pytest.mark.timeout(120)
def test_a_worker_that_dies_is_an_error_not_a_hang():
    with pytest.raises(DataLoaderWorkerError, match="exited unexpectedly with exit code 7"):
        list(DataLoader(Failing("die"), batch_size=1, num_workers=2))
    assert issubclass(DataLoaderWorkerError, RuntimeError)


@pytest.mark.timeout(120)
def test_timeout_stops_waiting_for_a_slow_worker():
    start = time.monotonic()
    with pytest.raises(DataLoaderWorkerError, match="timed out after 0.5 seconds"):
        list(DataLoader(Failing("sleep"), batch_size=1, num_workers=1, timeout=0.5))
    assert time.monotonic() - start < 25


@pytest.mark.timeout(120)
def test_worker_init_fn_errors_and_unpicklable_batches_reach_the_main_process():
    def bad_init(worker_id):
        raise ValueError("cannot start")

    with pytest.raises(ValueError, match="cannot start"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=bad_init))
    with pytest.raises(Exception, match="pickle"):
        list(DataLoader(Squares(4), num_workers=1, collate_fn=lambda b: (lambda: b)))


class Empty(Dataset):
    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError(i)


@pytest.mark.timeout(120)
def test_an_empty_dataset_is_an_empty_iteration_or_torchs_error():
    for workers in (0, 2):
        assert list(DataLoader(Empty(), batch_size=2, num_workers=workers)) == []
    assert len(DataLoader(Empty(), batch_size=2)) == 0
    with pytest.raises(ValueError):
        tdata.DataLoader(Empty(), shuffle=True)
    with pytest.raises(shrew.ShrewError, match="num_samples should be a positive integer"):
        DataLoader(Empty(), shuffle=True)


def test_samplers_draw_what_they_promise():
    g = shrew.Generator().manual_seed(1)
    perm = list(RandomSampler(range(10), generator=g))
    assert sorted(perm) == list(range(10)) and perm != list(range(10))
    long = list(RandomSampler(range(4), num_samples=10, generator=g))
    assert len(long) == 10 and sorted(long[:8]) == [0, 0, 1, 1, 2, 2, 3, 3]
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=100, generator=g))
    assert len(drawn) == 100 and set(drawn) == {0, 1, 2}
    assert sorted(SubsetRandomSampler([5, 9, 2], generator=g)) == [2, 5, 9]
    weights = [0.1, 0.0, 0.6, 0.3]
    counts = np.bincount(list(WeightedRandomSampler(weights, 20000, generator=g)), minlength=4)
    expected = 20000 * np.array(weights)
    assert counts[1] == 0
    assert (np.abs(counts - expected) < 4 * np.sqrt(expected + 1)).all(), counts
    distinct = list(WeightedRandomSampler(shrew.tensor(weights), 3, replacement=False,
                                          generator=g))
    assert sorted(distinct) == [0, 2, 3]


@pytest.mark.parametrize("call, message", [
    (lambda: RandomSampler(range(3), num_samples=0), "num_samples should be a positive"),
    (lambda: RandomSampler(range(3), replacement=1), "replacement should be a boolean"),
    (lambda: WeightedRandomSampler([1.0, -1.0], 2), "non-negative"),
    (lambda: WeightedRandomSampler([1.0, 0.0], 2, replacement=False), "without replacement"),
    (lambda: BatchSampler(range(3), 0, False), "batch_size should be a positive"),
    (lambda: DataLoader(Squares(3), sampler=[0], shuffle=True), "mutually exclusive"),
    (lambda: DataLoader(Squares(3), batch_sampler=[[0]], batch_size=2), "mutually exclusive"),
    (lambda: DataLoader(Squares(3), prefetch_factor=2), "prefetch_factor needs num_workers"),
    (lambda: DataLoader(Squares(3), persistent_workers=True), "persistent_workers needs"),
    (lambda: DataLoader(Squares(3), num_workers=-1), "num_workers must be"),
    (lambda: DataLoader(Counting(3), shuffle=True), "IterableDataset takes no shuffle"),
    (lambda: TensorDataset(shrew.ones(3), shrew.ones(4)), r"first dims differ: \[3\], \[4\]"),
    (lambda: random_split(range(10), [3, 3]), "sum to 6, the dataset has 10"),
])
def test_bad_arguments_raise(call, message):
    with pytest.raises(shrew.ShrewError, match=message):
        call()


def test_datasets_index_like_torch():
    x, y = shrew.tensor(np.arange(12.0).reshape(6, 2)), shrew.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6 and ds[-1][1].item() == 5 and ds[2][0].tolist() == [4.0, 5.0]
    with pytest.raises(IndexError):
        ds[6]
    both = Squares(3) + Squares(2)
    tboth = tdata.ConcatDataset([Squares(3), Squares(2)])
    assert isinstance(both, ConcatDataset) and both.cumulative_sizes == tboth.cumulative_sizes
    assert [_plain(both[i]) for i in range(-5, 5)] == [_plain(tboth[i]) for i in range(-5, 5)]
    with pytest.raises(IndexError, match="index 5 is out of range for 5 samples"):
        both[5]
    sub = Subset(Squares(10), [7, 2, 9])
    assert len(sub) == 3 and sub[1]["i"] == 2 and sub[-1]["i"] == 9


@pytest.mark.parametrize("lengths", [[0.3, 0.3, 0.4], [0.5, 0.5], [1.0], [4, 0, 7]])
def test_random_split_lengths_match_torch_and_partition(lengths):
    ours = random_split(range(11), lengths, generator=shrew.Generator().manual_seed(2))
    theirs = tdata.random_split(range(11), lengths, generator=torch.Generator().manual_seed(2))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    seen = [s[i] for s in ours for i in range(len(s))]
    assert sorted(seen) == list(range(11))
    again = random_split(range(11), lengths, generator=shrew.Generator().manual_seed(2))
    assert [s.indices for s in again] == [s.indices for s in ours]


def test_generator_state_round_trips_and_seeds():
    g = shrew.Generator().manual_seed(123)
    assert g.initial_seed() == 123
    state = g.get_state()
    first = g.randperm(20)
    assert g.randperm(20) != first
    g.set_state(state)
    assert g.randperm(20) == first and g.initial_seed() == 123
    seed = g.seed()
    assert g.initial_seed() == seed and shrew.Generator().manual_seed(seed).randperm(20) == \
        g.randperm(20)
    with pytest.raises(shrew.ShrewError, match="not a state from Generator.get_state"):
        g.set_state(shrew.tensor([1, 2, 3]))
    with pytest.raises(shrew.ShrewError, match="seed must be an int"):
        g.manual_seed(1.5)


def test_no_batching_converts_numpy_samples_to_tensors():
    loader = DataLoader(Squares(2), batch_size=None)
    sample = next(iter(loader))
    assert isinstance(sample["vec"], shrew.Tensor) and sample["vec"].tolist() == [0.0] * 3
    assert sample["pair"] == [0, [0.5, 0]] and sample["name"] == "s0"


@given(n=st.integers(0, 40), batch_size=st.integers(1, 9), drop_last=st.booleans())
def test_batching_matches_torch_for_any_length(n, batch_size, drop_last):
    ours = DataLoader(list(range(n)), batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(list(range(n)), batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]


@pytest.mark.filterwarnings("ignore:.*(split|Length of split).*:UserWarning")
@given(n=st.integers(0, 60), weights=st.lists(st.integers(1, 20), min_size=1, max_size=5))
def test_random_split_fractions_give_torchs_lengths(n, weights):
    fractions = [w / sum(weights) for w in weights]
    fractions[-1] = 1 - sum(fractions[:-1])
    try:
        expected = [len(s) for s in tdata.random_split(range(n), fractions)]
    except ValueError:
        with pytest.raises(shrew.ShrewError):
            random_split(range(n), fractions)
        return
    assert [len(s) for s in random_split(range(n), fractions)] == expected


@pytest.mark.timeout(240)
def test_workers_started_with_spawn_give_the_same_batches():
    """spawn (the default on macOS and Windows) pickles the dataset into a fresh
    interpreter instead of forking this one."""
    expected = _labels(DataLoader(Squares(9), batch_size=4, shuffle=True,
                                  generator=shrew.Generator().manual_seed(5)))
    loader = DataLoader(Squares(9), batch_size=4, shuffle=True, num_workers=1,
                        multiprocessing_context="spawn",
                        generator=shrew.Generator().manual_seed(5))
    assert _labels(loader) == expected


@pytest.mark.timeout(120)
def test_custom_collate_results_of_any_kind_cross_from_workers():
    loader = DataLoader(Squares(5), batch_size=2, num_workers=2,
                        collate_fn=lambda b: np.array([s["i"] for s in b]))
    assert [a.tolist() for a in loader] == [[0, 1], [2, 3], [4]]
    loader = DataLoader(Squares(3), batch_size=None, num_workers=1,
                        collate_fn=lambda s: (s["name"], shrew.tensor(s["sq"])))
    assert [(n, t.item()) for n, t in loader] == [("s0", 0.0), ("s1", 1.0), ("s2", 4.0)]
