"""Data checks that gate every publish: the Great Expectations suite ``PUBLISH_EXPECTATIONS``
run over the rows to publish (write-audit-publish: a failure blocks the publish).

Great Expectations is imported lazily (it takes seconds) and validates pandas DataFrames through
its pandas datasource (its SQL datasource over duckdb-engine does not work here).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..text import pii_mask
from ..store import PUBLISHED_STATUSES, TIERS, TYPES

# The Great Expectations suite that gates every publish. Each entry: (name shown to the operator,
# batch, GX expectation class, its arguments). Batch "memories" is the rows to publish with a
# computed `raw_pii` column; batch "scopes" has one row per scope with `working_over` /
# `short_term_over` = count minus that tenant's capacity. Batches "diff_scopes" and "diff_memories"
# are the diff gate against the version CURRENT points at (diff.py): a column that is null where the
# rule holds and names the scope or id where it does not.
PUBLISH_EXPECTATIONS: list[tuple[str, str, str, dict]] = [
    ("ids not null", "memories", "ExpectColumnValuesToNotBeNull", {"column": "id"}),
    ("ids unique", "memories", "ExpectColumnValuesToBeUnique", {"column": "id"}),
    ("tier in set", "memories", "ExpectColumnValuesToBeInSet", {"column": "tier", "value_set": list(TIERS)}),
    ("status in set", "memories", "ExpectColumnValuesToBeInSet",
     {"column": "status", "value_set": list(PUBLISHED_STATUSES)}),
    ("type in set", "memories", "ExpectColumnValuesToBeInSet", {"column": "type", "value_set": list(TYPES)}),
    ("content not empty", "memories", "ExpectColumnValueLengthsToBeBetween", {"column": "content", "min_value": 1}),
    ("version at least 1", "memories", "ExpectColumnValuesToBeBetween", {"column": "version", "min_value": 1}),
    ("importance within 0..1", "memories", "ExpectColumnValuesToBeBetween",
     {"column": "importance", "min_value": 0, "max_value": 1}),
    ("updated_at not before created_at", "memories", "ExpectColumnPairValuesAToBeGreaterThanB",
     {"column_A": "updated_at", "column_B": "created_at", "or_equal": True}),
    ("last_accessed_at not before created_at", "memories", "ExpectColumnPairValuesAToBeGreaterThanB",
     {"column_A": "last_accessed_at", "column_B": "created_at", "or_equal": True}),
    ("no raw PII", "memories", "ExpectColumnValuesToBeInSet", {"column": "raw_pii", "value_set": [False]}),
    ("working within capacity per scope", "scopes", "ExpectColumnValuesToBeBetween",
     {"column": "working_over", "max_value": 0}),
    ("short_term within capacity per scope", "scopes", "ExpectColumnValuesToBeBetween",
     {"column": "short_term_over", "max_value": 0}),
    ("active per scope not dropped beyond max_active_drop unexplained", "diff_scopes", "ExpectColumnValuesToBeNull",
     {"column": "unexplained_drop"}),
    ("important memories changed only with a user history row", "diff_memories", "ExpectColumnValuesToBeNull",
     {"column": "important_changed"}),
    ("no memory moved to another tenant", "diff_memories", "ExpectColumnValuesToBeNull", {"column": "tenant_moved"}),
]


@dataclass
class CheckResult:
    expectation: str
    success: bool
    observed: str


@dataclass
class CheckReport:
    """All expectations with their outcome; `failed` names the ones that block the publish."""

    results: list[CheckResult] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return all(r.success for r in self.results)

    @property
    def failed(self) -> list[str]:
        return [r.expectation for r in self.results if not r.success]

    def as_dict(self) -> dict[str, Any]:
        return {"success": self.success, "failed": self.failed,
                "checks": [{"expectation": r.expectation, "success": r.success, "observed": r.observed}
                           for r in self.results]}


def batches(memories: pl.DataFrame, scope_counts: pl.DataFrame,
            diff: dict[str, pl.DataFrame] | None = None) -> dict[str, pl.DataFrame]:
    """The frames the suite validates: rows to publish with `raw_pii`, per-scope overflow, and the
    diff gate's frames (`diff`; default: nothing to compare with, as on the first publish).

    `raw_pii` looks at every text a published row carries (content, summary, tags, extra, scope
    names, source ...) with the same detectors that redact at ingest (``pii_mask``)."""
    texts = [pl.col(name).fill_null("") for name, dtype in memories.schema.items() if dtype == pl.String]
    texts += [pl.col(name).list.join("\n").fill_null("") for name, dtype in memories.schema.items()
              if dtype == pl.List(pl.String)]
    text = pl.concat_str(texts, separator="\n")
    with_pii = memories.with_columns(raw_pii=pii_mask(memories.select(text).to_series()))
    # GX compares through pandas, which warns on zone-aware columns: all are UTC, so compare them naive
    zoned = [name for name, dtype in with_pii.schema.items() if isinstance(dtype, pl.Datetime) and dtype.time_zone]
    with_pii = with_pii.with_columns(pl.col(name).dt.replace_time_zone(None) for name in zoned)
    from .diff import empty_diff

    return {"memories": with_pii, "scopes": scope_counts, **(diff or empty_diff())}


def validate(frames: dict[str, pl.DataFrame]) -> CheckReport:
    """Run every expectation of the publish suite; never raises for failing data. Results come in
    the order of PUBLISH_EXPECTATIONS; an expectation whose batch is not in `frames` fails with the
    reason (it is never skipped)."""
    validations = _validations(json.dumps(PUBLISH_EXPECTATIONS))
    from great_expectations.validator.v1_validator import Validator

    outcomes: dict[str, Any] = {}
    with _GX_LOCK:  # one suite per process: GX's context is not made for concurrent runs
        for batch_name, validation in validations.items():
            if batch_name in frames:
                frame = frames[batch_name]
                # GX sees the columns its expectations name (a publish row has some 30 more, lists
                # and structs among them, that pandas would copy for nothing)
                wanted = [c for c in _columns(batch_name) if c in frame.columns]
                # The validator `ValidationDefinition.run` runs, without what run adds around it:
                # storing every result in the context's store (serialised; kept for the life of the
                # process) and re-checking that the definition is saved, a sixth of a validation.
                run = Validator(batch_definition=validation.batch_definition,
                                batch_parameters={"dataframe": frame.select(wanted).to_pandas()},
                                ).validate_expectation_suite(validation.suite)
                outcomes.update({r.expectation_config.meta["name"]: r for r in run.results})
    report = CheckReport()
    for name, batch_name, _, _ in PUBLISH_EXPECTATIONS:
        if name in outcomes:
            report.results.append(CheckResult(name, bool(outcomes[name].success), _observed(outcomes[name])))
        else:
            report.results.append(CheckResult(name, False, f"error: batch {batch_name!r} was not given"))
    return report


_GX_LOCK = threading.Lock()


def _columns(batch_name: str) -> list[str]:
    """The columns the expectations of `batch_name` name, in their order."""
    names: list[str] = []
    for _, target, _, kwargs in PUBLISH_EXPECTATIONS:
        for key in ("column", "column_A", "column_B"):
            if target == batch_name and key in kwargs and kwargs[key] not in names:
                names.append(kwargs[key])
    return names


@functools.lru_cache(maxsize=2)
def _validations(expectations: str) -> dict[str, Any]:
    """One GX validation definition per batch of the suite, built once per process (an ephemeral
    context, its pandas source and suites take GX a quarter of a second); keyed by the suite's text,
    so a changed suite gets its own."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    import great_expectations as gx

    for name in [n for n in logging.root.manager.loggerDict if n.startswith("great_expectations")]:
        logging.getLogger(name).setLevel(logging.WARNING)  # GX sets its own levels on import
    context = gx.get_context(mode="ephemeral")
    _quiet(context)
    source = context.data_sources.add_pandas("publish")
    validations: dict[str, Any] = {}
    for name, batch_name, kind, kwargs in json.loads(expectations):
        if batch_name not in validations:
            asset = source.add_dataframe_asset(batch_name)
            definition = asset.add_batch_definition_whole_dataframe(batch_name)
            suite = context.suites.add(gx.ExpectationSuite(name=f"publish-{batch_name}"))
            validations[batch_name] = context.validation_definitions.add(
                gx.ValidationDefinition(name=f"publish-{batch_name}", data=definition, suite=suite))
        suite = validations[batch_name].suite
        suite.add_expectation(getattr(gx.expectations, kind)(**kwargs, meta={"name": name}))
    return validations


def _observed(result) -> str:
    details = result.result or {}
    if "unexpected_count" in details:
        count = details.get("unexpected_count") or 0
        total = details.get("element_count")
        examples = details.get("partial_unexpected_list") or []
        text = f"{count} unexpected of {total}"
        if count and examples:
            text += f" (e.g. {', '.join(map(str, examples[:3]))})"
        return text
    if "observed_value" in details:
        return f"observed {details['observed_value']}"
    info = result.exception_info or {}
    # GX 1.x keys the errors by metric ({metric: {raised_exception, exception_message, ...}})
    errors = [info] if "raised_exception" in info else [e for e in info.values() if isinstance(e, dict)]
    messages = [e.get("exception_message") for e in errors if e.get("raised_exception")]
    if messages:
        return f"error: {messages[0]}"
    return ""


def _quiet(context) -> None:
    """No progress bars on stderr from inside a nightly run."""
    try:
        from great_expectations.data_context.types.base import ProgressBarsConfig

        context.variables.progress_bars = ProgressBarsConfig(globally=False)
    except Exception:  # an older or newer GX without this knob: bars are cosmetic
        pass
