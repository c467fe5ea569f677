"""The reports that say how each rank's script ended, written for the launcher
(`python -m shrew.distributed.run`) into the directory it names: one JSON file per rank,
by the rank's agent, or by the script itself when it aborts the job."""
from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

TAIL_LINES = 20  # the last lines of a rank's stderr a report keeps
REPORTS_ENV = "SHREW_RUN_REPORTS"  # the directory, as the agent tells its script


def write_report(directory: Path, env: Mapping[str, str], pid: int, code: int,
                 lines: list[str], reason: str = "") -> None:
    """rank-<RANK>.json in `directory`, written whole (renamed into place): how the
    script ended (`reason`, if given, says it in words), when, its last stderr lines."""
    report = {"rank": int(env["RANK"]), "local_rank": int(env["LOCAL_RANK"]), "pid": pid,
              "returncode": code, "reason": reason, "ended_at": time.time(),
              "stderr_tail": lines[-TAIL_LINES:]}
    path = directory / f"rank-{env['RANK']}.json"
    partial = path.with_suffix(f".{pid}.part")
    partial.write_text(json.dumps(report))
    partial.replace(path)


def report_abort(exit_code: int, reason: str, lines: list[str]) -> None:
    """Called by shrew.distributed in the script just before it aborts the job: mpiexec
    then kills every agent at once, this rank's before it can report, so the script
    leaves the report itself (only under the launcher, which sets REPORTS_ENV)."""
    directory = os.environ.get(REPORTS_ENV)
    if directory and "RANK" in os.environ and "LOCAL_RANK" in os.environ:
        write_report(Path(directory), os.environ, os.getpid(), exit_code, lines, reason)
