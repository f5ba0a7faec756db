"""Every kind the live scheduler watches is listed and watched under its own RBAC rules
(``operator/informer.py`` WATCHED_KINDS against ``operator/rbac.py``, which a deploy test keeps
equal to ``deploy/base/rbac.yaml``)."""

from __future__ import annotations

from volcano_py.cache.cache import KINDS
from volcano_py.operator.informer import WATCHED_KINDS
from volcano_py.operator.rbac import CLUSTER_RULES


def _group(api_path: str) -> str:
    """``/api/v1`` is the core group (""); ``/apis/<group>/<version>`` names its group."""
    parts = api_path.strip("/").split("/")
    return "" if parts[0] == "api" else parts[1]


def test_every_watched_kind_may_be_listed_and_watched() -> None:
    granted = {(group, resource): verbs for group, resource, verbs in CLUSTER_RULES}
    for kind in WATCHED_KINDS:
        verbs = granted.get((_group(kind.api_path), kind.plural), frozenset())
        assert {"list", "watch"} <= verbs, kind.kind


def test_the_scheduler_watches_every_kind_its_cache_tracks() -> None:
    assert {kind.kind for kind in WATCHED_KINDS} == set(KINDS)
    assert "ResourceQuota" in KINDS
