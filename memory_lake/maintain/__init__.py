"""Maintenance rules over the stored memories: access events, tier rules, dedup, conflicts, the
decision queue (user actions while the lake is busy), entity memory, forget, housekeeping
(retention) and the summaries of scopes and sessions with their evaluator."""

from .conflicts import (CONTRADICTION_PARTNERS_SQL, list_conflicts, parse_field_value, parse_take,
                        resolve_conflict)
from .decisions import apply_decisions
from .queue import pending_decisions, queue_decision
from .dedup import dedup, plan_dedup, unmerge
from .entities import FACT_ROW_FIELDS, extract_entities, group_facts, list_entities, published_entity_facts, scope_entity_facts
from .entities import has_entity_tables, scope_fact_digests
from .evaluate import SummaryScore, evaluate_summary
from .events import apply_events
from .forget import forget
from .housekeeping import REPORT_LAKE_META, housekeeping
from .summaries import compress_conversation, failed_summaries, preview_summaries, scrub_summary_report, summarize
from .tiers import append_cleanup_log, apply_moves, enforce_tiers, restore_memories

__all__ = [
    "CONTRADICTION_PARTNERS_SQL", "list_conflicts", "parse_field_value", "parse_take", "resolve_conflict",
    "apply_decisions", "pending_decisions", "queue_decision",
    "dedup", "plan_dedup", "unmerge",
    "FACT_ROW_FIELDS", "extract_entities", "has_entity_tables", "group_facts", "list_entities", "published_entity_facts", "scope_entity_facts", "scope_fact_digests",
    "SummaryScore", "evaluate_summary",
    "apply_events",
    "forget",
    "housekeeping", "REPORT_LAKE_META",
    "compress_conversation", "failed_summaries", "preview_summaries", "scrub_summary_report", "summarize",
    "append_cleanup_log", "apply_moves", "enforce_tiers", "restore_memories",
]
