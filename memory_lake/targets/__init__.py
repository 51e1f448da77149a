"""Targets: after a publish, the published memories agents work with go to the vector stores the
lake's ``[[targets]]`` name (LanceDB, Qdrant, Chroma) with the lake's own vectors, and only what
changed (issue 38.4). A layer above publish (it reads the published files) and below observe (the
nightly run calls `sync_targets` after ``publish_export``). The rule is in ``base.py``."""

from .base import (PublishedSet, Target, TargetError, open_target, plan_changes, published_set, select_targets,
                   sync_target, sync_targets, target_status)
from .rows import METADATA_COLUMNS, ROW_COLUMNS

__all__ = [
    "METADATA_COLUMNS", "ROW_COLUMNS", "PublishedSet", "Target", "TargetError", "open_target", "plan_changes",
    "published_set", "select_targets", "sync_target", "sync_targets", "target_status",
]
