"""``topology.volcano.sh/v1alpha1`` HyperNode: one switch (or rack, or room) of the network
topology tree, naming the nodes or lower HyperNodes beneath it."""

from __future__ import annotations

import re
from typing import Literal, Self

from pydantic import ConfigDict, Field, model_validator

from volcano_py.models.base import SpecError, VolcanoModel, implicit
from volcano_py.models.fieldtypes import DNS_SUBDOMAIN_PATTERN, Int64
from volcano_py.models.meta import Condition, LabelSelector
from volcano_py.models.resource import CrdInfo, CustomResource, PrinterColumn

MemberType = Literal["Node", "HyperNode"]


class ExactMatch(VolcanoModel):
    """Selects one node or HyperNode by name."""

    name: str = Field(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN_PATTERN)
    """The exact name of the member."""


class RegexMatch(VolcanoModel):
    """Selects the nodes whose names match a regular expression."""

    pattern: str = Field(min_length=1)
    """Regular expression matched against node names."""


_SELECTOR_KINDS = ("exactMatch", "regexMatch", "labelMatch")


class MemberSelector(VolcanoModel):
    """How a member is selected: exactly one of exactMatch, regexMatch and labelMatch."""

    # The same rules upstream's CRD states in CEL, so the API server enforces them too
    # (pydantic merges this with the base class's configuration).
    model_config = ConfigDict(
        json_schema_extra={
            "x-kubernetes-validations": [
                {
                    "rule": "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",
                    "message": "Either ExactMatch or RegexMatch or LabelMatch must be specified",
                },
                {
                    "rule": "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) "
                    "+ (has(self.labelMatch) ? 1 : 0) <= 1",
                    "message": "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified",
                },
            ]
        }
    )

    exact_match: ExactMatch | None = None
    """Select one member by name."""
    regex_match: RegexMatch | None = None
    """Select the nodes whose names match a pattern."""
    label_match: LabelSelector | None = None
    """Select the nodes with matching labels (Node members only)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        chosen = [
            kind
            for kind, value in zip(
                _SELECTOR_KINDS, (self.exact_match, self.regex_match, self.label_match), strict=True
            )
            if value is not None
        ]
        if len(chosen) != 1:
            raise SpecError(
                (),
                f"needs exactly one of {', '.join(_SELECTOR_KINDS)}"
                + (f" (got {', '.join(chosen)})" if chosen else ""),
            )
        if self.regex_match is not None:
            # Go's RE2 and Python's re differ at the edges; a pattern either refuses is
            # almost certainly a typo, so catch the common ones here.
            try:
                re.compile(self.regex_match.pattern)
            except re.error as error:
                raise SpecError(
                    ("regexMatch", "pattern"), f"invalid regular expression: {error}"
                ) from None
        return self


class MemberSpec(VolcanoModel):
    """One member of the HyperNode: a node or a lower HyperNode."""

    type: MemberType
    """Node or HyperNode."""
    selector: MemberSelector
    """How the member is selected."""


class HyperNodeSpec(VolcanoModel):
    """The desired configuration of the HyperNode."""

    tier: int = Field(ge=0)
    """Level in the topology; lower tiers have better network locality."""
    tier_name: str | None = Field(default=None, max_length=253)
    """Name of the tier, e.g. leaf or spine."""
    members: list[MemberSpec] = Field(min_length=1)
    """Nodes or lower HyperNodes in this HyperNode; at least one."""


class HyperNodeStatus(VolcanoModel):
    """The observed state of the HyperNode."""

    conditions: list[Condition] = Field(default_factory=list)
    """Conditions of the HyperNode."""
    node_count: Int64 = implicit(0, ge=0)
    """Number of nodes currently in the HyperNode."""


class HyperNode(CustomResource):
    """A group of nodes sharing network topology or performance characteristics."""

    CRD = CrdInfo(
        group="topology.volcano.sh",
        version="v1alpha1",
        kind="HyperNode",
        plural="hypernodes",
        singular="hypernode",
        scope="Cluster",
        short_names=("hn",),
        printer_columns=(
            # Upstream declares Tier as a string column although the field is an integer.
            PrinterColumn("Tier", ".spec.tier", "string"),
            PrinterColumn("TierName", ".spec.tierName", "string"),
            PrinterColumn("NodeCount", ".status.nodeCount", "integer"),
            PrinterColumn("Age", ".metadata.creationTimestamp", "date"),
        ),
        status_subresource=True,
    )

    spec: HyperNodeSpec
    """The desired configuration of the HyperNode."""
    status: HyperNodeStatus = Field(default_factory=HyperNodeStatus)
    """The observed state of the HyperNode."""
