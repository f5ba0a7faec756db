"""``--feature-gates``: Volcano's feature gates (``pkg/features/volcano_features.go``), parsed as
component-base's ``featuregate.Set`` parses them (``A=true,B=false``; an unknown gate or a
value that is not a Go boolean is an error naming it).

Each process acts on the gates it has the feature for; it runs as if every other gate were
off, and warns once, naming the gate, about each of those turned on on its command line.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from volcano_py.api.dra import KUBE_GATE_DEFAULTS, KUBE_GATES_LOCKED

_TRUE: Final = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE: Final = frozenset({"0", "f", "F", "false", "FALSE", "False"})

# Volcano's gates and their defaults (all alpha upstream). The Kubernetes gates DRA reads
# (``api.dra.KUBE_GATE_DEFAULTS``) are accepted too, as Volcano's scheduler accepts every
# Kubernetes gate.
DEFAULTS: Final[Mapping[str, bool]] = {
    "WorkLoadSupport": True,
    "VolcanoJobSupport": True,
    "PodDisruptionBudgetsSupport": True,
    "QueueCommandSync": True,
    "PriorityClass": True,
    "CSIStorage": False,
    "ResourceTopology": True,
    "CronVolcanoJobSupport": True,
    "SchedulingGatesQueueAdmission": False,
}
# component-base's switches for every alpha / beta gate at once.
_ALL_ALPHA: Final = "AllAlpha"
_ALL_BETA: Final = "AllBeta"


@dataclass(frozen=True)
class FeatureGates:
    """The gates a process runs with: the defaults, then what ``--feature-gates`` set."""

    explicit: Mapping[str, bool]

    def kube_gates(self) -> dict[str, bool]:
        """The Kubernetes gates the scheduler's plugins read (DRA's), defaults overridden."""
        return {gate: self.explicit.get(gate, on) for gate, on in KUBE_GATE_DEFAULTS.items()}

    def enabled(self, gate: str) -> bool:
        if gate in KUBE_GATE_DEFAULTS:
            return self.explicit.get(gate, KUBE_GATE_DEFAULTS[gate])
        if gate not in DEFAULTS:
            raise KeyError(f"unknown feature gate {gate}")
        if gate in self.explicit:
            return self.explicit[gate]
        # Every Volcano gate is alpha: AllAlpha sets those not named themselves.
        return self.explicit.get(_ALL_ALPHA, DEFAULTS[gate])

    def warn_without_effect(self, acted_on: Iterable[str], process: str) -> list[str]:
        """Log once, by name, each gate turned on on the command line that this process has
        no code for (it runs as if the gate were off, so turning one off needs no word);
        returns the names warned about."""
        acted = set(acted_on)
        idle = [gate for gate, on in self.explicit.items() if on and gate not in acted]
        log = logging.getLogger("volcano_py.feature_gates")
        for gate in idle:
            log.warning(
                "--feature-gates: %s=true has no effect in volcano-py %s (the feature is not"
                " implemented here; it runs as if the gate were off)",
                gate,
                process,
            )
        return idle


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as ``featuregate.Set``; ValueError names the bad entry."""
    gates: dict[str, bool] = {}
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise ValueError(f"missing bool value for {name}")
        known = name in DEFAULTS or name in KUBE_GATE_DEFAULTS
        if not known and name not in (_ALL_ALPHA, _ALL_BETA):
            raise ValueError(f"unrecognized feature gate: {name}")
        if value in _TRUE:
            gates[name] = True
        elif value in _FALSE:
            gates[name] = False
        else:
            raise ValueError(f"invalid value of {name}={value}, err: not a boolean")
        # Volcano registers Kubernetes' gates too (k8s.io/kubernetes v1.36): a GA gate locked
        # to its default cannot be set otherwise.
        default = KUBE_GATE_DEFAULTS.get(name)
        if name in KUBE_GATES_LOCKED and gates[name] != default:
            raise ValueError(
                f"cannot set feature gate {name} to {str(gates[name]).lower()}, feature is"
                f" locked to {str(default).lower()}"
            )
    return gates


def _feature_gates_type(text: str) -> dict[str, bool]:
    try:
        return parse_feature_gates(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class _MergeGates(argparse.Action):
    """Repeated ``--feature-gates`` flags add up, later ones winning (as ``Set`` does)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        merged = dict(getattr(namespace, self.dest) or {})
        assert isinstance(values, dict)
        merged.update(values)
        setattr(namespace, self.dest, merged)


def add_feature_gates(parser: argparse._ActionsContainer, acted_on: str) -> None:
    gates = ", ".join(f"{name}={str(default).lower()}" for name, default in DEFAULTS.items())
    parser.add_argument(
        "--feature-gates",
        type=_feature_gates_type,
        action=_MergeGates,
        default={},
        metavar="A=true,B=false",
        help=f"Volcano's feature gates (defaults: {gates}; also AllAlpha, AllBeta) and"
        " Kubernetes' DRA gates ("
        + ", ".join(f"{n}={str(v).lower()}" for n, v in KUBE_GATE_DEFAULTS.items())
        + f"). {acted_on}"
        " Any other gate turned on is accepted and logged as having no effect here.",
    )
