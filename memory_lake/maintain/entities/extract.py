"""**Extraction** of a batch of memories (seed 002 "实体记忆"): the mentions, one row of
``entity_facts`` per entity, memory and sentence (``extract_mentions``). Each distinct sentence is
read once, the English way (``english``) or the Chinese way (``chinese``; a latin name inside a
Chinese sentence both ways); PII placeholders are blanked first; a title (in 《》, or Title Case
between quotes) is one thing and nothing inside it is read on its own. A chat turn ("Caroline: I
went to the show") is read as its speaker and what its utterance says (``chat``): a named speaker
is a person mentioned by each stating sentence of the turn, a role ("AI", "用户") is no entity.
"""

from __future__ import annotations

import re
from collections import Counter

import polars as pl

from ...store import Policy
from .chinese import _chinese_mentions
from .english import _COMMON_MIN, _COMMON_RATIO, _LOWER_WORD, _STARTERS, _english_mentions
from .rows import CONFIDENCE, _ANY_PLACEHOLDER, _HAN, _PLACEHOLDER, _hash, _key, sentences

# A title: in 《》, or Title Case between quotes ("Charlotte's Web", “The Name of the Wind”). It is
# one thing, and nothing inside it is read on its own (not "Charlotte", not "Wind").
_QUOTED_TITLE = re.compile(r"《([^《》\n]{1,60})》|[\"“]([A-Z0-9][^\"“”\n]{0,60}?)[\"”]")


def _titles(sentence: str) -> tuple[str, list[tuple[str, str, float]]]:
    """The sentence with its titles blanked (to the same length) and the titles as mentions."""
    found = []

    def blank(match: re.Match) -> str:
        title = (match.group(1) or match.group(2) or "").strip()
        words = title.split()
        title = title.strip(" ,.;:!?")
        if match.group(2) is not None and not (1 <= len(words) <= 8 and _title_case(words)) or (
                len(words) == 1 and title.lower() in _STARTERS):
            return match.group()                          # a quoted remark ("That"), not a title
        if title:
            found.append((title, "thing", CONFIDENCE["pattern"]))
        return " " * len(match.group())
    return _QUOTED_TITLE.sub(blank, sentence), found


def _title_case(words: list[str]) -> bool:
    """Whether every word of a quoted text is capitalised, small words aside: a title ("The Name
    of the Wind"), not a remark ("I said 'no way'")."""
    small = {"a", "an", "the", "of", "and", "or", "in", "on", "to", "for", "with", "at", "by", "from"}
    big = [w for w in words if w.lower() not in small]
    return bool(big) and all(w[:1].isupper() or w[:1].isdigit() for w in big)


def extract_mentions(memories: pl.DataFrame, policy: Policy, known: frozenset[str] = frozenset()) -> pl.DataFrame:
    """The mentions in `memories` (columns id, tenant, agent_id, user_id, content, created_at):
    one row per entity, memory and sentence with the entity's id, name key and spelling, the
    mention's kind and confidence, and the sentence's places and placeholders. Each distinct
    sentence is read once (one loop over distinct sentences, then joins). `known`: lower-case
    names of entities the lake already holds (evidence that a capitalised word is a name)."""
    from ..chat import statement

    user_dict = tuple(policy.entities.user_dict)
    # a chat turn ("Caroline: I went to the show", "用户：...") is read as its speaker and what its
    # utterance says: greetings, thanks, goodbyes and interjections name nothing (chat.py)
    turns = memories.select("id", "tenant", "agent_id", "user_id", "created_at", turn=pl.col("content").map_elements(
        _turn_parts, return_dtype=pl.List(pl.String)))
    speakers, roles = _speakers(turns)
    parts = memories.select("id", "tenant", "agent_id", "user_id", "created_at",
                            sentence=pl.col("content").map_elements(
                                lambda text: sentences(statement(text, questions=True)),
                                return_dtype=pl.List(pl.String)))
    parts = parts.explode("sentence").drop_nulls("sentence").with_columns(
        position=pl.int_range(pl.len()).over("id"))
    distinct = parts["sentence"].unique().to_list()
    # sentences of chat turns (a speaker): read with the stricter evidence rule (_english_mentions)
    spoken = frozenset(parts.join(turns.filter(pl.col("turn").list.get(0) != "").select("id"), on="id")["sentence"]
                       .to_list())
    lowercase = frozenset(w for s in distinct for w in _LOWER_WORD.findall(s))
    # capitalised inside a sentence, after a lower-case word (in chat, people capitalise after a
    # comma: "Wow, Love it"; the second word of a name is no evidence: "Summer Sounds")
    capitalised = frozenset(m.group(1).lower() for s in distinct
                            for m in re.finditer(r"(?<![A-Za-z'’])[a-z]+ ([A-Z][A-Za-z]+(?:[ -][A-Z][A-Za-z]+)*)", s))
    capitalised |= known | frozenset(k[-1] for k in speakers)
    # a common noun capitalised inside a sentence ("a fellow Chef", "- Tomato"): written in lower
    # case far more often in the batch, it is no name
    lower_counts = Counter(w for s in distinct for w in _LOWER_WORD.findall(s))
    capital_counts = Counter(m.group().lower() for s in distinct for m in re.finditer(r"\b[A-Z][a-z]+\b", s))
    common = frozenset(w for w, n in lower_counts.items() if n >= _COMMON_MIN and n >= _COMMON_RATIO * capital_counts[w])
    rows = []
    for sentence in distinct:
        # a PII placeholder ([PHONE:3f2a9c1d], [SECRET]) names no entity: its capitals are blanked
        # (to the same length) before mentions are read; it stays a value of the sentence below
        read = _ANY_PLACEHOLDER.sub(lambda m: " " * len(m.group()), sentence)
        read, titles = _titles(read)
        mentions = titles + (_chinese_mentions(read, user_dict) if _HAN.search(read)
                             else _english_mentions(read, lowercase, capitalised, sentence in spoken, common))
        # a latin name inside a Chinese sentence ("和Alice开会") is read the English way too
        if _HAN.search(read) and re.search(r"[A-Z]", read):
            mentions += _english_mentions(read, lowercase, capitalised)
        if not mentions:
            continue
        places = sorted({_key(s) for s, kind, _ in mentions if kind == "place"})
        values = places + sorted(m.group() for m in _PLACEHOLDER.finditer(sentence))
        best: dict[str, tuple[str, str, float]] = {}
        for surface, kind, confidence in mentions:
            key = _key(surface)
            if key not in best or confidence > best[key][2]:
                best[key] = (surface, kind, confidence)
        rows += [(sentence, key, surface, kind, confidence, values) for key, (surface, kind, confidence) in best.items()]
    found = pl.DataFrame(rows, schema={"sentence": pl.String, "key": pl.String, "surface": pl.String,
                                       "mention_kind": pl.String, "confidence": pl.Float64,
                                       "slot_values": pl.List(pl.String)}, orient="row")
    joined = parts.join(found, on="sentence")
    joined = _with_speakers(joined, parts, turns, speakers, roles)
    scope = [pl.col("tenant"), pl.col("agent_id").fill_null("\x00"), pl.col("user_id").fill_null("\x00")]
    return joined.with_columns(
        entity_id=pl.lit("e_") + pl.concat_str([*scope, pl.col("key")], separator="\x1f")
        .map_batches(lambda s: s.map_elements(lambda v: _hash(v), return_dtype=pl.String), return_dtype=pl.String),
    ).with_columns(
        fact_id=pl.lit("f_") + pl.concat_str([pl.col("entity_id"), pl.col("id"), pl.col("position").cast(pl.String)],
                                             separator="\x1f")
        .map_elements(lambda v: _hash(v), return_dtype=pl.String),
    ).select("fact_id", "entity_id", "tenant", "agent_id", "user_id", memory_id="id", content="sentence",
             surface="surface", key="key", mention_kind="mention_kind", slot_values="slot_values",
             confidence="confidence", mentioned_at="created_at")


def _turn_parts(text: str) -> list[str]:
    from ..chat import split_turn

    turn = split_turn(text)
    return [turn.speaker, "true" if turn.role else "", turn.utterance] if turn else ["", "", ""]


def _first_stating(text: str) -> str | None:
    """The sentences of a turn's utterance that state something of substance (two content words at
    least), joined by \x1f; None when there is none."""
    from ...text import ENGLISH_STOP_WORDS
    from ..chat import statement

    found = [s for s in sentences(statement(text))
             if len([w for w in re.findall(r"[a-z]+", s.lower()) if w not in ENGLISH_STOP_WORDS])
             + len(re.findall(r"[\u3400-\u9fff]", s)) // 2 >= 2]
    return "\x1f".join(found) if found else None


def _speakers(turns: pl.DataFrame) -> tuple[set[tuple], set[tuple]]:
    """(scope + name key) of the named speakers and of the roles that speak in `turns`."""
    named, roles = set(), set()
    for tenant, agent, user, (speaker, role, _) in turns.select("tenant", "agent_id", "user_id", "turn").iter_rows():
        if speaker:
            (roles if role == "true" else named).add((tenant, agent, user, _key(speaker)))
    return named, roles


def _with_speakers(joined: pl.DataFrame, parts: pl.DataFrame, turns: pl.DataFrame, speakers: set[tuple],
                   roles: set[tuple]) -> pl.DataFrame:
    """The mentions with each named speaker as a person mentioned by each stating sentence of each
    turn it says something in, a scope's speakers read as persons wherever they are named, and
    its roles ("AI", "用户": the assistant, the user) as no entity."""
    if not speakers and not roles:
        return joined
    said = turns.filter(pl.col("turn").list.get(0) != "", pl.col("turn").list.get(1) != "true").select(
        "id", surface=pl.col("turn").list.get(0),
        stating=pl.col("turn").list.get(2).map_elements(_first_stating, return_dtype=pl.String))
    # the speaker is mentioned by every sentence of the turn that states something of substance
    # ("Hey Mel!", "mostly.", "I'm good." do not): those are what the speaker said
    first = (parts.join(said.drop_nulls("stating"), on="id")
             .filter(pl.col("stating").str.split("\x1f").list.contains(pl.col("sentence"))).drop("stating"))
    own = first.with_columns(key=pl.col("surface").map_elements(_key, return_dtype=pl.String),
                             mention_kind=pl.lit("person"), confidence=pl.lit(CONFIDENCE["pattern"]),
                             slot_values=pl.lit([], dtype=pl.List(pl.String))).select(joined.columns)
    scope_key = pl.concat_list(pl.col("tenant"), pl.col("agent_id").fill_null("\x00"),
                               pl.col("user_id").fill_null("\x00"), pl.col("key")).list.join("\x1f")
    flat = {"\x1f".join("\x00" if v is None else v for v in entry) for entry in speakers}
    flat_roles = {"\x1f".join("\x00" if v is None else v for v in entry) for entry in roles}
    # a role and what opens with it ("AI", "AI Companion": the assistant) is no entity
    first_key = pl.concat_list(pl.col("tenant"), pl.col("agent_id").fill_null("\x00"),
                               pl.col("user_id").fill_null("\x00"), pl.col("key").str.split(" ").list.first()
                               ).list.join("\x1f")
    both = pl.concat([own, joined.filter(~scope_key.is_in(list(flat_roles)) & ~first_key.is_in(list(flat_roles)))],
                     how="vertical_relaxed")
    both = both.with_columns(mention_kind=pl.when(scope_key.is_in(list(flat))).then(pl.lit("person"))
                             .otherwise(pl.col("mention_kind")))
    return both.unique(subset=["id", "position", "key"], keep="first", maintain_order=True)
