"""memory-lake: a batch maintenance and analytics pipeline for AI-agent memory.

    from memory_lake import Lake
    lake = Lake.init("lake")            # creates the lake (Lake.open("lake") opens an existing one)
    write_snapshot(records, "lake")     # an agent drops a snapshot (atomic: temp name, then rename)
    report = lake.ingest()              # everything in lake/inbox
    lake.sql("SELECT tier, count(*) FROM memories GROUP BY tier")
    load_export("lake", tenant="acme", user="u-alice")   # an agent loads its scope from exports/CURRENT
    open_lake("lake").health.pl()       # an analyst's tables (live, or at="published" / "v3")
"""

from . import ingest, maintain, observe, publish, search, store, text  # noqa: F401 (every stage loads:
# each registers what a forget must scrub in the stores it owns; see store/registry.py)
from .analyst import LakeView, open_lake
from .api import Lake
from .ingest import write_snapshot
from .maintain import SummaryScore, evaluate_summary
from .publish import ReloadInFull, UnknownExportFormat, UnknownScope, changes_since, load_export
from .store import InputError, LakeBusy, LakeNotFound, MemoryLakeError, Policy

__all__ = ["Lake", "Policy", "MemoryLakeError", "LakeBusy", "LakeNotFound", "InputError", "write_snapshot",
           "load_export", "changes_since", "ReloadInFull", "UnknownScope", "UnknownExportFormat",
           "evaluate_summary", "SummaryScore", "open_lake", "LakeView"]
__version__ = "0.1.0"
