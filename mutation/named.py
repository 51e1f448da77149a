"""`make mutate-named`: issue 19's eight named mutations, each applied to this checkout, its test run,
the file restored. Prints CAUGHT or SURVIVED per mutation; exits 1 if one survived."""
import subprocess
import sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
M = [
 ("gate PII ignores summary", "memory_lake/publish/checks.py",
  'for name, dtype in memories.schema.items() if dtype == pl.String]',
  'for name, dtype in memories.schema.items() if dtype == pl.String and name != "summary"]',
  "tests/publish/test_gate_summary_pii.py"),
 ("leading-dot inbox file not skipped", "memory_lake/ingest/load.py",
  'if name.startswith(".") or lower.endswith(IN_PROGRESS_SUFFIXES):', 'if lower.endswith(IN_PROGRESS_SUFFIXES):',
  "tests/ingest/test_inbox_tempfiles.py"),
 ("semantic pass without shared type or tag", "memory_lake/maintain/dedup/candidates.py",
  '.filter((pl.col("ta") == pl.col("tb")) | (pl.col("ga").list.set_intersection("gb").list.len() > 0)))', ')',
  "tests/maintain/test_dedup_thresholds.py::test_the_semantic_pass_needs_a_shared_type_or_tag"),
 ("cosine 0.90 -> 0.80", "memory_lake/store/policy.py", "semantic_cosine: float = 0.90", "semantic_cosine: float = 0.80",
  "tests/maintain/test_dedup_thresholds.py"),
 ("cosine 0.90 -> 0.50", "memory_lake/store/policy.py", "semantic_cosine: float = 0.90", "semantic_cosine: float = 0.50",
  "tests/maintain/test_dedup_thresholds.py"),
 ("jaccard 0.6 -> 0.3", "memory_lake/store/policy.py", "near_jaccard: float = 0.6", "near_jaccard: float = 0.3",
  "tests/maintain/test_dedup_thresholds.py"),
 ("canonical newest-first", "memory_lake/maintain/dedup/clustering.py",
  '.sort(["label", "importance", "created_at", "id"], descending=[False, True, False, False]))',
  '.sort(["label", "importance", "created_at", "id"], descending=[False, True, True, False]))',
  "tests/maintain/test_dedup_canonical.py"),
 ("conflicts list --tenant shows every tenant", "memory_lake/maintain/conflicts.py",
  '    if tenant:\n        where.append("c.tenant = ?")\n        params.append(tenant)\n', '',
  "tests/maintain/test_conflicts_tenant.py"),
]
survived: list[str] = []
for name, rel, before, after, test in M:
    path = ROOT / rel
    text = path.read_text(encoding="utf-8")
    assert text.count(before) == 1, (name, text.count(before))
    backup = path.read_bytes()
    try:
        path.write_text(text.replace(before, after), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", test],
                              cwd=ROOT, capture_output=True, text=True)
        last = done.stdout.strip().splitlines()[-1]
        print(f"{name}: {'CAUGHT' if done.returncode else 'SURVIVED'} ({last})", flush=True)
        survived += [] if done.returncode else [name]
    finally:
        path.write_bytes(backup)
sys.exit(1 if survived else 0)
