"""`make mutate`: mutation testing of the rule modules (issue 19), one rule at a time.

Each rule below names the code that holds it (whole files, or some functions of a file) and the
test modules that own it. For each rule this copies the code and tests into ``.mutmut/<rule>/``,
runs mutmut there on that code only, with only those test modules (a mutant is never killed by
some far-away integration test), and writes ``mutation-report/<rule>.json`` and the summary
``mutation-report/REPORT.md``: per rule the score, the counts and every survivor with its file,
line and mutation. Survivors listed in ``mutation/equivalent.toml`` (mutants that cannot change
behaviour) are marked with the reason. Why mutmut, and how to read the report: docs/TESTING.md.

    python mutation/mutate.py                 # every rule (hours: run it under nice, overnight)
    python mutation/mutate.py checks inbox    # some rules
    python mutation/mutate.py --list          # the rules, their code and tests
    python mutation/mutate.py inbox --survivors   # re-test only the last survivors (after new tests)
    python mutation/mutate.py --sample 120 --seed 1   # a random sample of 120 mutants per rule

A whole run of every rule is some 10,000 mutants at 2-20 s each on two cores. ``--sample N`` tests
N mutants per rule drawn at random (seeded, so a run can be repeated): the score of a random
sample estimates the whole rule's score, and the report gives the 95 % interval of the estimate.
To judge new tests without bias, kill the survivors of one sample, then measure another seed.

A rule's ``.mutmut/<rule>/`` folder is kept: mutmut re-tests only the functions whose code changed
since its last run there.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutmut"
REPORTS = ROOT / "mutation-report"
EQUIVALENT = Path(__file__).with_name("equivalent.toml")


@dataclass(frozen=True)
class Rule:
    name: str
    code: dict[str, tuple[str, ...]]  # file -> functions to mutate (() = the whole file); Class.method for methods
    tests: tuple[str, ...]
    about: str = ""
    extra: dict = field(default_factory=dict)


RULES = [
    Rule("inbox", {"memory_lake/ingest/inbox.py": (),
                   "memory_lake/ingest/load.py": ("scan_inbox", "discover_snapshots", "_kind")},
         ("tests/ingest/test_inbox_tempfiles.py", "tests/ingest/test_inbox_writes.py",
          "tests/ingest/test_inbox_edit_rules.py", "tests/ingest/test_inbox_scan_rules.py"),
         "the inbox convention (temporary names skipped) and the write path of edits"),
    Rule("checks", {"memory_lake/publish/checks.py": ()},
         ("tests/publish/test_checks.py", "tests/publish/test_gate_summary_pii.py",
          "tests/publish/test_checks_quiet.py", "tests/publish/test_checks_observed.py"), "the publish gate"),
    Rule("conflicts", {"memory_lake/maintain/conflicts.py": ()},
         ("tests/maintain/test_conflicts.py", "tests/maintain/test_conflicts_tenant.py",
          "tests/maintain/test_conflicts_rules.py"), "the conflict queue"),
    Rule("tiers", {"memory_lake/maintain/tiers.py": ()}, ("tests/maintain/test_tiers*.py",), "the tier lifecycle"),
    Rule("merge", {"memory_lake/ingest/merge.py": ()}, ("tests/ingest/test_merge*.py",), "the three-way merge"),
    Rule("search-filters", {"memory_lake/search/query.py": ("_check_scope_value", "_check_filters", "_vocabulary",
                                                            "_scope", "_scope_where"),
                            "memory_lake/search/scopeindex.py": ("load_scope",)},
         ("tests/search/test_search.py", "tests/search/test_search_filters*.py"),
         "scope and filters of a search (tenant isolation)"),
    Rule("forget", {"memory_lake/maintain/forget.py": (), "memory_lake/ingest/forget.py": (), "memory_lake/publish/forget.py": (), "memory_lake/observe/forget.py": (), "memory_lake/store/registry.py": ()}, ("tests/maintain/test_forget*.py",), "forget and its scrubbers"),
    Rule("redact", {"memory_lake/text/redact/patterns.py": (), "memory_lake/text/redact/validate.py": (),
                    "memory_lake/text/redact/placeholders.py": (), "memory_lake/text/redact/stages.py": (),
                    "memory_lake/text/redact/json_repair.py": (), "memory_lake/text/redact/apply.py": ()},
         ("tests/ingest/test_redact*.py", "tests/ingest/test_pii.py"), "PII redaction at ingest"),
    Rule("dedup", {"memory_lake/maintain/dedup/candidates.py": (), "memory_lake/maintain/dedup/clustering.py": (), "memory_lake/maintain/dedup/guard.py": (), "memory_lake/maintain/dedup/names.py": (), "memory_lake/maintain/dedup/reading.py": (), "memory_lake/maintain/dedup/rewording.py": (), "memory_lake/maintain/dedup/step.py": (), "memory_lake/maintain/dedup/unmerge.py": (), "memory_lake/maintain/dedup/values.py": (), "memory_lake/maintain/dedup/verdicts.py": (), "memory_lake/maintain/dedup/words.py": (), "memory_lake/text/lexicon/british.py": (), "memory_lake/text/lexicon/cedict.py": (), "memory_lake/text/lexicon/chinese.py": (), "memory_lake/text/lexicon/cilin.py": (), "memory_lake/text/lexicon/english.py": (), "memory_lake/text/lexicon/files.py": (), "memory_lake/text/lexicon/kinds.py": (), "memory_lake/text/lexicon/pairs.py": (), "memory_lake/text/lexicon/pointers.py": (), "memory_lake/text/lexicon/questions.py": (), "memory_lake/text/lexicon/relatives.py": (), "memory_lake/text/lexicon/short_forms.py": (), "memory_lake/text/lexicon/wordnet.py": ()},
         ("tests/maintain/test_dedup.py", "tests/maintain/test_dedup_thresholds.py",
          "tests/maintain/test_dedup_canonical.py", "tests/maintain/test_dedup_paraphrase.py",
          "tests/maintain/test_lexicon.py", "tests/maintain/test_dedup_rules.py"), "dedup passes, guard, dictionaries, canonical choice"),
    # issue 34: the modules issues 11-19 added, each with the test modules that own it
    Rule("summaries", {"memory_lake/maintain/summaries/compress.py": (), "memory_lake/maintain/summaries/coverage.py": (), "memory_lake/maintain/summaries/cues.py": (), "memory_lake/maintain/summaries/extract.py": (), "memory_lake/maintain/summaries/gate.py": (), "memory_lake/maintain/summaries/plan.py": (), "memory_lake/maintain/summaries/report.py": (), "memory_lake/maintain/summaries/step.py": ()},
         ("tests/maintain/test_summaries*.py", "tests/maintain/test_llm_summary.py", "tests/cli/test_summarize.py",
          "tests/test_tenant_isolation*.py"),
         "scope summaries: the extractive summariser, its token budget and the gate"),
    Rule("evaluate", {f"memory_lake/maintain/evaluate/{name}.py": () for name in (
        "fact", "numerals", "dates", "names", "sentences", "words", "polarity", "anchors", "extract", "cosine",
        "retention", "compression", "readability", "accuracy", "score")},
         ("tests/maintain/test_evaluate*.py", "tests/cli/test_summary_score.py"), "the summary evaluator"),
    Rule("entities", {"memory_lake/maintain/entities/chinese.py": (), "memory_lake/maintain/entities/english.py": (), "memory_lake/maintain/entities/extract.py": (), "memory_lake/maintain/entities/facts.py": (), "memory_lake/maintain/entities/listing.py": (), "memory_lake/maintain/entities/rows.py": (), "memory_lake/maintain/entities/step.py": ()},
         ("tests/maintain/test_entities*.py", "tests/cli/test_entities_cli.py", "tests/test_tenant_isolation*.py"), "entities and facts"),
    Rule("context", {"memory_lake/search/context.py": ()}, ("tests/search/test_context*.py", "tests/test_tenant_isolation*.py"),
         "the context pack an agent loads (tenant isolation, budget)"),
    Rule("contract", {"memory_lake/publish/contract.py": ()}, ("tests/publish/test_contract*.py",),
         "the export contract"),
    Rule("diff", {"memory_lake/publish/diff.py": ()}, ("tests/publish/test_diff*.py",), "the diff gate"),
    Rule("rollback", {"memory_lake/publish/rollback.py": ()}, ("tests/publish/test_rollback*.py",),
         "rolling the published version back"),
    Rule("load", {"memory_lake/publish/load.py": ()}, ("tests/publish/test_load*.py", "tests/test_tenant_isolation*.py"),
         "load_export: what an agent reads"),
    Rule("notify", {"memory_lake/observe/notify.py": ()}, ("tests/observe/test_notify*.py",), "alerts to a webhook"),
    Rule("backup", {"memory_lake/store/backup.py": ()}, ("tests/store/test_backup*.py",), "backup and restore"),
]
STATUS = {  # mutmut's exit code -> status (mutmut.stats.status_by_exit_code, without importing mutmut)
    1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests", 34: "skipped", 36: "timeout",
    37: "killed", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout", None: "not checked"}


def module_of(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def patterns(rule: Rule) -> list[str]:
    """mutmut mutant-name globs for the rule's functions ([] = every mutant of its files)."""
    if all(not functions for functions in rule.code.values()):
        return []
    found = []
    for path, functions in rule.code.items():
        module = module_of(path)
        if not functions:
            found.append(f"{module}.*")
        for name in functions:
            cls, _, method = name.rpartition(".")
            found.append(f"{module}.xǁ{cls}ǁ{method}__mutmut_*" if cls else f"{module}.x_{name}__mutmut_*")
    return found


def tests_of(rule: Rule) -> list[str]:
    """The rule's test modules; a name may be a glob (tests/maintain/test_tiers*.py)."""
    found = []
    for name in rule.tests:
        found += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(name)) if any(c in name for c in "*?[") else [name]
    return list(dict.fromkeys(found))


def prepare(rule: Rule) -> Path:
    """``.mutmut/<rule>/``: a fresh copy of the code and the tests, and a pyproject.toml whose
    [tool.mutmut] limits mutmut to the rule's files and test modules."""
    work = WORK / rule.name
    work.mkdir(parents=True, exist_ok=True)
    # docs/: the contract tests read docs/EXPORT.md (without it the contract rule cannot start)
    for folder in ("memory_lake", "tests", "docs"):
        shutil.rmtree(work / folder, ignore_errors=True)
        shutil.copytree(ROOT / folder, work / folder, ignore=shutil.ignore_patterns("__pycache__"))
    settings = {
        "source_paths": ["memory_lake/"],
        "only_mutate": sorted(rule.code),
        "pytest_add_cli_args_test_selection": tests_of(rule),
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q", "-m", "not slow"],
        "also_copy": ["docs/"],
        # A server process imports polars, DuckDB, GX and torch once and forks a worker per
        # mutant; a plain fork of the test process is not safe with torch's threads.
        "process_isolation": "forkserver",
    }
    lines = [f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in settings.items()]
    config = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (work / "pyproject.toml").write_text(config + "\n[tool.mutmut]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return work


def generate(rule: Rule, work: Path) -> list[str]:
    """Write the rule's mutants in ``work/mutants`` (as ``mutmut run`` does first) and return
    their names, without testing any."""
    code = ("import os\nfrom mutmut.__main__ import create_mutants\n"
            "from mutmut.utils.file_utils import copy_src_dir, copy_also_copy_files\n"
            "os.makedirs('mutants', exist_ok=True)\ncopy_src_dir()\ncopy_also_copy_files()\ncreate_mutants(1)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"mutmut could not generate the mutants of rule {rule.name}:\n{done.stderr[-2000:]}")
    wanted, names = patterns(rule), []
    for path in rule.code:
        codes = json.loads((work / "mutants" / f"{path}.meta").read_text(encoding="utf-8"))["exit_code_by_key"]
        names += [k for k in codes if not wanted or any(fnmatch.fnmatchcase(k, p) for p in wanted)]
    return sorted(names, key=natural)


def run(rule: Rule, only: list[str] | None = None, sample: int | None = None, seed: int = 1) -> dict:
    """Mutate the rule's code and test it (`only`: just these mutants, e.g. the last survivors;
    `sample`: that many of the rule's mutants drawn at random with `seed`)."""
    work = prepare(rule)
    if sample:
        shutil.rmtree(work / "mutants", ignore_errors=True)  # a sample's figures are of that sample only
        names = generate(rule, work)
        only = sorted(random.Random(seed).sample(names, min(sample, len(names))), key=natural)
        started = time.monotonic()
        execute(rule, work, only)
        result = summarise(rule, work, time.monotonic() - started)
        return {**result, "sample": {"size": len(only), "of": len(names), "seed": seed,
                                     "interval": interval(result)}}
    if not only and patterns(rule):
        # mutmut resumes by itself, except when given mutant names: then it re-tests them all. So
        # give it the rule's mutants not tested yet (after an interrupted run, or changed code).
        only = pending(rule, work)
        if only == []:
            return summarise(rule, work, json.loads((REPORTS / f"{rule.name}.json").read_text(encoding="utf-8"))[
                "seconds"] if (REPORTS / f"{rule.name}.json").exists() else 0)
    started = time.monotonic()
    execute(rule, work, only or patterns(rule))
    seconds = time.monotonic() - started
    if only:  # a re-run of some mutants: the run time of the whole rule stays the last full run's
        seconds = json.loads((REPORTS / f"{rule.name}.json").read_text(encoding="utf-8"))["seconds"]
    if only and (REPORTS / f"{rule.name}.json").exists():
        return retested(rule, work, only)
    return summarise(rule, work, seconds)


def execute(rule: Rule, work: Path, names: list[str]) -> None:
    """``mutmut run`` in `work` on these mutant names or globs ([] = every mutant)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the mutants folder must come first
    env.update(PREFECT_SERVER_ANALYTICS_ENABLED="false", GX_ANALYTICS_ENABLED="false", HF_HUB_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    mutmut = Path(sys.executable).with_name("mutmut")
    with open(work / "mutmut.log", "w", encoding="utf-8") as log:
        done = subprocess.run([str(mutmut), "run", "--max-children", "1", *names], cwd=work, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise SystemExit(f"mutmut failed on rule {rule.name} (exit {done.returncode}); see {work / 'mutmut.log'}")


def interval(result: dict) -> list[float] | None:
    """The 95 % Wilson interval, in %, of a sampled score (killed / tested)."""
    n = result["tested"]
    if not n:
        return None
    p, z = result["score"] / 100, 1.96
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round(100 * (centre - half) / (1 + z * z / n), 1), round(100 * (centre + half) / (1 + z * z / n), 1)]


def retested(rule: Rule, work: Path, only: list[str]) -> dict:
    """The last full report with `only` (its survivors) tested again. mutmut forgets its other
    results when the rule's test list changes, so the last report keeps them."""
    last = json.loads((REPORTS / f"{rule.name}.json").read_text(encoding="utf-8"))
    codes = {}
    for path in rule.code:
        codes |= json.loads((work / "mutants" / f"{path}.meta").read_text(encoding="utf-8"))["exit_code_by_key"]
    equivalent = load_equivalent()
    counts = dict(last["counts"])
    survivors = []
    for old in last["survivors"]:
        status = STATUS.get(codes.get(old["mutant"], "gone"), "suspicious") if old["mutant"] in codes else "gone"
        if status in ("survived", "no tests", "suspicious"):
            survivors.append(describe(work, old["file"], old["mutant"], status, equivalent))
            continue
        counts[old["status"]] -= 1
        # "gone": the function changed since, so this mutant no longer exists (a full run tests the new ones)
        counts[status] = counts.get(status, 0) + 1
    tested = sum(counts.values()) - counts.get("skipped", 0) - counts.get("not checked", 0) - counts.get("gone", 0)
    caught = counts.get("killed", 0) + counts.get("timeout", 0)
    explained = sum(1 for s in survivors if s["equivalent"])
    result = {**last, "counts": counts, "tested": tested, "survivors": survivors,
              "score": round(100 * caught / tested, 1) if tested else None,
              "score_without_equivalent": round(100 * caught / (tested - explained), 1) if tested else None}
    if "sample" in last:
        result["sample"] = {**last["sample"], "interval": interval(result), "survivors_retested": True}
    return result


def pending(rule: Rule, work: Path) -> list[str] | None:
    """The rule's mutants a previous run in `work` left untested; None when there was no run."""
    wanted, found = patterns(rule), []
    for path in rule.code:
        meta = work / "mutants" / f"{path}.meta"
        if not meta.exists():
            return None
        codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        found += [k for k, code in codes.items() if code is None and any(fnmatch.fnmatchcase(k, p) for p in wanted)]
    return found


def summarise(rule: Rule, work: Path, seconds: float) -> dict:
    wanted = patterns(rule)
    equivalent = load_equivalent()
    counts: dict[str, int] = {}
    survivors = []
    for path in rule.code:
        meta = json.loads((work / "mutants" / f"{path}.meta").read_text(encoding="utf-8"))
        for key, code in sorted(meta["exit_code_by_key"].items(), key=lambda kv: natural(kv[0])):
            if wanted and not any(fnmatch.fnmatchcase(key, p) for p in wanted):
                continue
            status = STATUS.get(code, "suspicious")
            counts[status] = counts.get(status, 0) + 1
            if status in ("survived", "no tests", "suspicious"):
                survivors.append(describe(work, path, key, status, equivalent))
    tested = sum(counts.values()) - counts.get("skipped", 0) - counts.get("not checked", 0)
    caught = counts.get("killed", 0) + counts.get("timeout", 0)
    unexplained = sum(1 for s in survivors if not s["equivalent"])
    return {"rule": rule.name, "about": rule.about, "code": {p: list(f) for p, f in rule.code.items()},
            "tests": list(rule.tests), "seconds": round(seconds), "counts": counts, "tested": tested,
            "score": round(100 * caught / tested, 1) if tested else None,
            "score_without_equivalent": round(100 * caught / (tested - (len(survivors) - unexplained)), 1)
            if tested else None,
            "survivors": survivors}


def natural(key: str) -> tuple:
    name, _, number = key.rpartition("__mutmut_")
    return name, int(number) if number.isdigit() else 0


def describe(work: Path, path: str, key: str, status: str, equivalent: list[dict]) -> dict:
    """File, line and mutation of one mutant, from `mutmut show`'s diff."""
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    diff = subprocess.run([str(mutmut), "show", key], cwd=work, env=env, capture_output=True, text=True).stdout
    removed = [line[1:] for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    function = key.rpartition("__mutmut_")[0].rpartition(".")[2].removeprefix("x_").replace("ǁ", ".").strip(".")
    line = locate(ROOT / path, function, removed[0] if removed else "")
    before, after = " / ".join(s.strip() for s in removed), " / ".join(s.strip() for s in added)
    why = next((e["why"] for e in equivalent if e["file"] == path and e["function"] == function
                and e["before"] == before and e["after"] == after), None) or sql_case_only(before, after)
    return {"file": path, "line": line, "function": function, "mutant": key, "status": status,
            "before": before, "after": after, "equivalent": why}


_QUOTED = re.compile(r"'[^']*'")


def sql_case_only(before: str, after: str) -> str | None:
    """The reason a mutant is equivalent when it only changes the case of SQL outside its quoted
    values ("SELECT id FROM runs" -> "select id from runs", "STATUS" as a column key): DuckDB folds
    the case of keywords and identifiers, so the statement is the same. A changed quoted value
    ('nightly' -> 'NIGHTLY') is not folded, and a mutant of Python code is never "case only"."""
    if before == after or before.lower() != after.lower():
        return None
    if _QUOTED.findall(before) != _QUOTED.findall(after):
        return None
    # the code writes SQL keywords in capitals (and messages in lower case): a capital keyword in
    # the original line is what marks it as SQL
    if not re.search(r"\b(SELECT|FROM|WHERE|JOIN|UPDATE|INSERT|DELETE|ORDER BY|GROUP BY|CREATE|DROP|SET|VALUES|"
                     r"AND|OR|NOT|CASE|WHEN|THEN|ELSE|END|IS|NULL|VARCHAR|FILTER|EXISTS|USING)\b", before):
        return None
    return "only the case of SQL keywords or identifiers changes; DuckDB folds their case (rule in mutate.py)"


def locate(path: Path, function: str, text: str) -> int | None:
    """The line of `text` in `function` of `path` (the first one after the function's def)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = function.rpartition(".")[2]
    start = next((i for i, line in enumerate(lines) if re.match(rf"\s*def {re.escape(name)}\(", line)), 0)
    for i in range(start, len(lines)):
        if text and lines[i] == text:
            return i + 1
    return None


def load_equivalent() -> list[dict]:
    """The explained mutants: mutation/equivalent.toml and mutation/equivalent/<rule>.toml."""
    found = []
    for path in [EQUIVALENT, *sorted(EQUIVALENT.with_suffix("").glob("*.toml"))]:
        if path.exists():
            found += tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", [])
    return found


def write_reports(results: list[dict]) -> Path:
    REPORTS.mkdir(exist_ok=True)
    for result in results:
        (REPORTS / f"{result['rule']}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                                       encoding="utf-8")
    known = {r.name: None for r in RULES}
    for path in sorted(REPORTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("rule") in known:
            known[data["rule"]] = data
    lines = ["# Mutation report (`make mutate`)", "",
             "Score = mutants killed (or timed out) / mutants tested, each rule against its own test modules. "
             "'Explained' survivors are equivalent mutants listed in mutation/equivalent.toml. "
             "A sampled rule tests N random mutants of its M: its score estimates the rule's, "
             "with the 95 % interval.", "",
             "| rule | mutants tested | killed | survived | explained | score | score less explained | not run | run time | sample |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, data in known.items():
        if data is None:
            lines.append(f"| {name} | not run | | | | | | | | |")
            continue
        explained = sum(1 for s in data["survivors"] if s["equivalent"])
        caught = data["counts"].get("killed", 0) + data["counts"].get("timeout", 0)
        lines.append(f"| {name} | {data['tested']} | {caught} | {len(data['survivors'])} | {explained} | "
                     f"{data['score']} % | {data['score_without_equivalent']} % | {data['counts'].get('not checked', 0)} | "
                     f"{data['seconds']} s | {sampled(data)} |")
    for name, data in known.items():
        if not data or not data["survivors"]:
            continue
        lines += ["", f"## {name}: survivors", ""]
        for s in data["survivors"]:
            where = f"{s['file']}:{s['line'] or '?'} ({s['function']})"
            note = f" — equivalent: {s['equivalent']}" if s["equivalent"] else ""
            lines.append(f"- {where} [{s['status']}]: `{s['before']}` → `{s['after']}`{note}")
    report = REPORTS / "REPORT.md"
    report.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return report


def sampled(data: dict) -> str:
    sample = data.get("sample")
    if not sample:
        return "whole rule"
    low, high = sample["interval"] or (None, None)
    retested = ", survivors re-tested" if sample.get("survivors_retested") else ""
    return f"{sample['size']} of {sample['of']}, seed {sample['seed']}, 95 % interval {low}–{high} %{retested}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rules", nargs="*", help=f"rules to run (default all): {', '.join(r.name for r in RULES)}")
    parser.add_argument("--list", action="store_true", help="show the rules, their code and tests, and stop")
    parser.add_argument("--report-only", action="store_true", help="rebuild the reports from the last runs")
    parser.add_argument("--sample", type=int, metavar="N",
                        help="test N mutants of each rule drawn at random (the score estimates the rule's score)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed of --sample (default 1)")
    parser.add_argument("--survivors", action="store_true",
                        help="re-test only the last run's survivors of each rule (after writing tests that kill them)")
    args = parser.parse_args(argv)
    by_name = {r.name: r for r in RULES}
    unknown = [n for n in args.rules if n not in by_name]
    if unknown:
        parser.error(f"unknown rule(s) {', '.join(unknown)}; the rules are {', '.join(by_name)}")
    chosen = [by_name[n] for n in args.rules] or RULES
    if args.list:
        for rule in chosen:
            code = "; ".join(f"{p}" + (f" ({', '.join(f)})" if f else "") for p, f in rule.code.items())
            print(f"{rule.name}: {rule.about}\n  code:  {code}\n  tests: {' '.join(tests_of(rule))}")
        return 0
    results = []
    for rule in chosen:
        if args.report_only:
            last = REPORTS / f"{rule.name}.json"
            previous = json.loads(last.read_text(encoding="utf-8")) if last.exists() else {}
            result = summarise(rule, WORK / rule.name, previous.get("seconds", 0))
            if "sample" in previous:
                result["sample"] = {**previous["sample"], "interval": interval(result)}
            results.append(result)
        else:
            print(f"mutate {rule.name}: {', '.join(rule.code)} against {len(rule.tests)} test module(s)", flush=True)
            only = None
            if args.survivors:
                last = json.loads((REPORTS / f"{rule.name}.json").read_text(encoding="utf-8"))
                only = [s["mutant"] for s in last["survivors"]]
                if not only:
                    results.append(last)
                    continue
            results.append(run(rule, only, sample=None if only else args.sample, seed=args.seed))
            write_reports(results)  # a rule's result is kept even if a later rule is interrupted
            print(f"  score {results[-1]['score']} %, {len(results[-1]['survivors'])} survivor(s), "
                  f"{results[-1]['seconds']} s", flush=True)
    print(f"report: {write_reports(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
