"""Publish: stage an export version, gate it with the Great Expectations suite and the diff gate
(checks), then point ``exports/CURRENT`` at it (write-audit-publish); the export contract
(``contract``), `load_export` for agents (in full, or the changes since a version: `changes_since`),
and the list of versions with rollback."""

from . import contract
from .checks import PUBLISH_EXPECTATIONS, validate
from .contract import FORMAT_VERSION
from .diff import open_holds, release_command, release_hold
from .export import (check_export, current_version, folder_name, publish, publish_export, remove_staging,
                     scope_folder, stage_export)
from .export import _context_pack as context_pack
from .export import markdown_text
from . import forget as _forget  # noqa: F401 (registers the exports scrubber)
from .changes import ReloadInFull, compose_changes
from .load import UnknownExportFormat, UnknownScope, changes_since, load_export, check_names
from .rollback import list_publishes, rollback

__all__ = [
    "PUBLISH_EXPECTATIONS", "validate",
    "check_export", "current_version", "folder_name", "publish", "publish_export", "remove_staging",
    "scope_folder", "stage_export",
    "context_pack",
    "markdown_text",
    "contract", "FORMAT_VERSION", "UnknownExportFormat", "UnknownScope", "load_export", "check_names",
    "ReloadInFull", "changes_since", "compose_changes",
    "list_publishes", "rollback",
    "open_holds", "release_command", "release_hold",
]
