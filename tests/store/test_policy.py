"""The policy: seed defaults, lake config file, per-tenant overrides, explicit overrides."""

from __future__ import annotations

import pytest

from memory_lake import InputError
from memory_lake.store.policy import IngestPolicy, Policy, TierPolicy, load_policy


def test_defaults_are_the_seed_numbers():
    policy = Policy()
    assert policy.tiers == TierPolicy(working_capacity=20, short_term_capacity=100, long_term_warn=10_000,
                                      short_term_idle_days=7, overflow_keep_importance=0.7,
                                      overflow_keep_references=2, consolidate_min_age_hours=24,
                                      consolidate_importance=0.7, consolidate_references=2, dormant_days=60,
                                      suggest_archive_days=180, important_importance=1.0,
                                      recall_default_window_hours=24, disabled_rules=())
    assert policy.ingest == IngestPolicy(max_content_bytes=65536, default_tier="short_term", default_type="other",
                                         default_importance=0.5, default_operator="agent")


def test_config_file_tenant_and_explicit_overrides(tmp_path):
    (tmp_path / "memory-lake.toml").write_text(
        "[tiers]\nworking_capacity = 30\n\n[tenants.acme.tiers]\nshort_term_capacity = 200\n")
    policy = load_policy(tmp_path, {"ingest": {"max_content_bytes": 10}})
    assert (policy.tiers.working_capacity, policy.tiers.short_term_capacity, policy.ingest.max_content_bytes) == (30, 100, 10)
    acme = policy.for_tenant("acme")
    assert (acme.tiers.working_capacity, acme.tiers.short_term_capacity) == (30, 200)
    assert policy.for_tenant("globex").tiers.short_term_capacity == 100


@pytest.mark.parametrize("text, message", [
    ("[tiers]\nworking_capacty = 3\n", "unknown policy key"),
    ("[nope]\nx = 1\n", "unknown policy section"),
    ("[tiers\n", "not valid TOML"),
    ("[tenants.acme.tiers]\nbogus = 1\n", "unknown policy key"),
])
def test_bad_config_is_a_clear_error(tmp_path, text, message):
    (tmp_path / "memory-lake.toml").write_text(text)
    with pytest.raises(InputError, match=message):
        load_policy(tmp_path)


@pytest.mark.parametrize("section, key, value, message", [
    ("summaries", "max_tokens", -1, "[summaries] max_tokens = -1: must be at least 1 (default 500)"),
    ("tiers", "working_capacity", -5, "[tiers] working_capacity = -5: must be at least 1 (default 20)"),
    ("context", "max_tokens", 0, "[context] max_tokens = 0: must be at least 1 (default 2000)"),
    ("tiers", "working_capacity", 2.5, "[tiers] working_capacity = 2.5: write a whole number (default 20)"),
    ("dedup", "near_jaccard", -0.1, "[dedup] near_jaccard = -0.1: must be a finite number, 0 or more (default 0.6)"),
])
def test_an_out_of_range_number_is_an_input_error_when_the_policy_is_read(section, key, value, message):
    # issue 37.8: max_tokens = -1 or working_capacity = -5 were accepted, then failed or blocked runs
    with pytest.raises(InputError) as refused:
        Policy().with_overrides({section: {key: value}})
    assert str(refused.value) == message
    assert Policy().with_overrides({"notify": {"retries": 0}}).notify.retries == 0  # 0 stays fine where it means none
