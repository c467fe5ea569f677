"""The three hparams summaries (experiment, session start, session end), as PyTorch's."""
from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import metadata as hp_metadata
from tensorboard.plugins.hparams.api_pb2 import (DataType, Experiment, HParamInfo, MetricInfo,
                                                 MetricName, Status)
from tensorboard.plugins.hparams.plugin_data_pb2 import (HParamsPluginData, SessionEndInfo,
                                                         SessionStartInfo)

from ...core.errors import ShrewTypeError
from .summary import to_numpy

# (proto field, DataType name) by Python type; bool before int, since bool is an int
_KINDS: tuple[tuple[type | tuple[type, ...], str, str], ...] = (
    (bool, "bool_value", "DATA_TYPE_BOOL"),
    ((int, float), "number_value", "DATA_TYPE_FLOAT64"),
    (str, "string_value", "DATA_TYPE_STRING"))


def _summary(tag: str, **content: Any) -> Summary:
    data = HParamsPluginData(version=hp_metadata.PLUGIN_DATA_VERSION, **content)
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name=hp_metadata.PLUGIN_NAME, content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def _kind(name: str, value: Any) -> tuple[Any, str, str]:
    if hasattr(value, "detach") or hasattr(value, "shape"):  # a tensor: its one number
        value = to_numpy(value, "add_hparams").reshape(-1)[0].item()
    for types, field, kind in _KINDS:
        if isinstance(value, types):
            return value, field, kind
    raise ShrewTypeError(f"add_hparams: {name!r} should be an int, float, str, bool or "
                         f"tensor, got {type(value).__qualname__}")


def hparams(hparam_dict: dict[str, Any], metric_dict: dict[str, Any],
            domains: dict[str, list[Any]]) -> tuple[Summary, Summary, Summary]:
    infos, start = [], SessionStartInfo()
    for name, raw in hparam_dict.items():
        if raw is None:
            continue
        value, field, kind = _kind(name, raw)
        setattr(start.hparams[name], field, value)
        discrete = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                 for d in domains[name]])
                    if name in domains else None)
        infos.append(HParamInfo(name=name, type=DataType.Value(kind),
                                domain_discrete=discrete))
    experiment = Experiment(hparam_infos=infos,
                            metric_infos=[MetricInfo(name=MetricName(tag=k))
                                          for k in metric_dict])
    return (_summary(hp_metadata.EXPERIMENT_TAG, experiment=experiment),
            _summary(hp_metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _summary(hp_metadata.SESSION_END_INFO_TAG, session_end_info=SessionEndInfo(
                status=Status.Value("STATUS_SUCCESS"))))
