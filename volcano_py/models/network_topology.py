"""The network-topology constraint shared by Jobs, PodGroups, sub-groups and partitions."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, model_validator

from volcano_py.models.base import SpecError, VolcanoModel

NetworkTopologyMode = Literal["hard", "soft"]


class NetworkTopologySpec(VolcanoModel):
    """Keeps a gang inside one HyperNode: hard mode refuses to place it otherwise, soft mode
    only prefers it."""

    mode: NetworkTopologyMode = "hard"
    """hard or soft."""
    highest_tier_allowed: int | None = Field(default=None, ge=0)
    """The highest HyperNode tier the job may span."""
    highest_tier_name: str | None = Field(default=None, max_length=253)
    """The highest HyperNode tier, by tierName, the job may span."""

    @model_validator(mode="after")
    def _one_way_to_name_the_tier(self) -> Self:
        # Volcano's PodGroup and Job webhooks: the two would disagree about which tier wins.
        if self.highest_tier_allowed is not None and self.highest_tier_name:
            raise SpecError(
                ("highestTierName",),
                "must not be set together with highestTierAllowed; name the tier one way",
            )
        return self
