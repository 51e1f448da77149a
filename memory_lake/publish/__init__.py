"""Publish: stage an export version, gate it with the Great Expectations suite (checks), then point
``exports/CURRENT`` at it (write-audit-publish)."""

from .checks import PUBLISH_EXPECTATIONS, validate
from .export import (check_export, current_version, folder_name, publish, publish_export, remove_staging,
                     scope_folder, stage_export)
from .export import _context_pack as context_pack
from .export import markdown_text

__all__ = [
    "PUBLISH_EXPECTATIONS", "validate",
    "check_export", "current_version", "folder_name", "publish", "publish_export", "remove_staging",
    "scope_folder", "stage_export",
    "context_pack",
    "markdown_text",
]
