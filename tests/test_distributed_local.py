"""The parts of shrew.distributed that need no second process: DistributedSampler against
PyTorch's, and the errors raised before any communication."""
from __future__ import annotations

import re

import pytest
import torch.utils.data

import shrew
import shrew.distributed as dist
import shrew.nn as nn
from shrew.nn.parallel import DistributedDataParallel
from shrew.utils.data import DistributedSampler


@pytest.mark.parametrize("n", [0, 1, 2, 5, 7, 10, 13])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sampler_without_shuffle_matches_torch(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                                     drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs) == len(list(ours))


@pytest.mark.parametrize("n, replicas, drop_last", [(10, 3, False), (10, 3, True), (5, 4, False)])
def test_sampler_shuffle_partitions_a_seeded_permutation(n, replicas, drop_last):
    def shares(epoch, seed=0):
        samplers = [DistributedSampler(range(n), replicas, r, seed=seed, drop_last=drop_last)
                    for r in range(replicas)]
        for s in samplers:
            s.set_epoch(epoch)
        return [list(s) for s in samplers]

    first = shares(0)
    assert first == shares(0)                      # every rank, every run: the same order
    assert shares(1) != first and shares(0, seed=5) != first
    taken = [i for share in first for i in share]
    assert len({len(s) for s in first}) == 1       # equal shares
    if drop_last:
        assert len(set(taken)) == len(taken) == (n // replicas) * replicas
    else:
        assert set(taken) == set(range(n))         # all covered, padding repeats some
    # Unshuffled, the same padding and interleaving PyTorch uses, applied to the order.
    ours = DistributedSampler(range(n), replicas, 0, shuffle=False, drop_last=drop_last)
    assert ours.total_size == len(taken)


def test_sampler_errors():
    with pytest.raises(shrew.ShrewError, match="invalid rank 3"):
        DistributedSampler(range(4), num_replicas=3, rank=3)
    with pytest.raises(shrew.ShrewError, match="num_replicas"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    with pytest.raises(shrew.ShrewError, match="process group has not been initialized"):
        DistributedSampler(range(4))
    with pytest.raises(shrew.ShrewError, match="must have a length"):
        DistributedSampler(iter(range(4)), 1, 0)


def test_calls_before_init_process_group_say_so():
    assert dist.is_available() and not dist.is_initialized()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(shrew.ones(2)),
                 lambda: DistributedDataParallel(nn.Linear(2, 2))):
        with pytest.raises(shrew.ShrewError, match="init_process_group"):
            call()


def test_init_process_group_argument_errors():
    with pytest.raises(shrew.ShrewError, match="backend 'nccl' is not available"):
        dist.init_process_group(backend="nccl")
    with pytest.raises(shrew.ShrewError, match="timeout must be a positive"):
        dist.init_process_group(timeout=-1)
    with pytest.raises(shrew.ShrewError, match="init_method 'tcp://h:1' is not supported"):
        dist.init_process_group("mpi", "tcp://h:1")
    assert not dist.is_initialized()


def test_ddp_options_shrew_does_not_have_are_refused():
    for kwargs, text in [({"device_ids": [0]}, "device_ids=[0]"),
                         ({"output_device": 0}, "output_device=0"),
                         ({"find_unused_parameters": True}, "find_unused_parameters=True")]:
        with pytest.raises(shrew.ShrewError, match=re.escape(text + " is not supported")):
            DistributedDataParallel(nn.Linear(2, 2), **kwargs)


def test_default_backend_for_every_device_is_mpi_and_init_process_group_takes_it():
    """pytorch/examples' minGPT-ddp passes get_default_backend_for_device(device) to
    init_process_group; torch answers 'gloo' for cpu, shrew 'mpi', its only backend."""
    assert torch.distributed.get_default_backend_for_device("cpu") == "gloo"
    for device in ("cpu", shrew.device("cpu"), "cuda:1", "opencl"):
        assert dist.get_default_backend_for_device(device) == "mpi"
    with pytest.raises(shrew.ShrewError, match="no backend for device 'meta'") as info:
        dist.get_default_backend_for_device("meta")
    assert isinstance(info.value, ValueError)
    with pytest.raises(shrew.ShrewError, match="expected a device") as info:
        dist.get_default_backend_for_device(0)
    assert isinstance(info.value, TypeError)
