"""shrew.profiler: PyTorch's torch.profiler on shrew's backends.

Each op is timed at its backend primitive (``shrew::matmul``, ``shrew::tanh``, ...), so
every backend is profiled alike; ``record_function`` adds named ranges around them.
"""
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule,
                       supported_activities, tensorboard_trace_handler)
from .recorder import record_function

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
