"""``python -m volcano_py controllers`` as a subprocess: the scheduler's wrapper with the other
subcommand (same ports, probes, metrics, log file and stopping)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from e2e.scheduler_process import SchedulerProcess


class ControllersProcess(SchedulerProcess):
    def __init__(
        self,
        kubeconfig: Path,
        workdir: Path,
        args: Sequence[str] = (),
        *,
        label: str = "controllers",
    ) -> None:
        super().__init__(kubeconfig, workdir, args, label=label)
        self.argv[self.argv.index("scheduler")] = "controllers"
