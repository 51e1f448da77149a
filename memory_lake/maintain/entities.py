"""Entity memory (seed 002 "实体记忆"): the people, places, organisations and things a scope's
memories mention, each with its facts, merged so that the same fact is stored once.

**Extraction** needs no LLM. English: capitalised spans ("Alice", "New York", "Acme Corp"), read
by their neighbours: a title before a name makes a person (``Dr Smith``), a company suffix an
organisation (``Acme Corp``), ``in`` / ``from`` / ``near`` / ``moved to`` a place (``lives in
Paris``), a person's verb after a name a person (``Alice prefers``). A capitalised word that opens
a sentence counts only when it is not a common word (stop words, words that open notes such as
``Remind`` or ``Decided``, and any word the same batch also writes in lower case). Chinese: jieba
segments and its part-of-speech tags name the kind (``nr`` person, ``ns`` place, ``nt``
organisation, ``nz`` other proper noun); a new word jieba's HMM finds that starts with a common
surname is a person, a surname before a title (``张经理``) is a person, and a name before a company
word (``华信`` + ``科技``) is an organisation. The lake's user dictionary (``[entities] user_dict``,
entries ``"word tag"``) adds words with their tags. jieba's part-of-speech HMM costs ~10x its
segmentation, so segmentation runs with the plain HMM and tags come from the dictionary
(``benchmarks/entities.py`` measures it).

**Facts** are the sentences of a memory that mention an entity (one row of ``entity_facts`` per
entity, memory and sentence), with the source memory, a confidence, and the places and PII
placeholders the sentence holds (``slot_values``). Summaries are not read: they restate other
memories, and would count every mention twice.

**Merging** uses dedup's machinery: candidate pairs among an entity's facts come from dedup's
MinHash pass (``near_pairs``) over the sentences with their places and placeholders read as ``0``
(numbers already are), so "Alice lives in Paris" and "Alice lives in Berlin" are one slot; then
dedup's contradiction guard (``contradiction``) decides, oldest fact first, against the facts still
current:

- the same fact (no sign at all): the newer mention is merged into the older fact
  (``merged_into``), whose sources and count grow;
- a changed value - another place or placeholder in the same slot, or a changed number, date, a
  negation, an antonym or a swap: the newer one is a new fact that supersedes the old one
  (``superseded_by``, ``change``, ``valid_to``); both stay, the old one as history. Never a silent
  merge;
- an identifier or a replaced content word (two different things): two facts, both current.

**Incremental**: ``entity_extractions`` records each memory read, with its content hash, scope,
creation time and the extractor version (with the user dictionary's hash). A run reads only new or
changed memories, drops the facts of memories that were forgotten or merged since, and recomputes
only the entities they touch; a second run with nothing new reads nothing.

Forget reaches both tables (scrubbers registered here): a forgotten memory's facts go, the facts
that repeated or superseded them are repaired, and an entity with no source left goes.
"""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from ..store import InputError, MemoryLakeError, Policy, StepReport, check_scope, iso, step_error, transaction
from .dedup import DIFFERENT, contradiction, near_pairs
from ..store import register_scrubber
from ..text import COMPOUND_SURNAMES as _COMPOUND_SURNAMES, SURNAMES as _SURNAMES
from ..text import cedict_name, common_word, is_chinese_word

EXTRACTOR_VERSION = "entities-1"
KINDS = ("person", "place", "organisation", "thing")
# Extraction confidence per signal: a user-dictionary word is certain; a tag or a pattern strong;
# a bare capitalised word weaker; one that opens a sentence weaker still.
CONFIDENCE = {"user_dict": 1.0, "pattern": 0.9, "tag": 0.8, "capitalised": 0.7, "sentence_start": 0.6, "new_word": 0.6}

# ---------------------------------------------------------------------------- English
_TITLES = frozenset("mr mrs ms miss dr prof sir madam mx".split())
_ORG_SUFFIXES = frozenset("inc ltd llc llp plc corp corporation gmbh ag sa co company labs lab group holdings bank "
                          "university college institute foundation agency partners technologies systems solutions "
                          "services industries enterprises logistics foods imports exports motors airlines airways "
                          "pharmaceuticals pharma consulting capital ventures media studios networks software "
                          "associates trading insurance".split())
# Words before a place ("lives in Paris", "moved to Berlin", "from Lisbon", "near Dublin").
_PLACE_BEFORE = re.compile(r"(?:\b(?:in|from|near|into)|\b(?:moved|moving|moves|relocated|relocating|flew|flying|"
                           r"travel(?:l)?ed|travel(?:l)?ing|trip|commutes?|based|lives?|living|lived) (?:to|in))\s+$",
                           re.IGNORECASE)
# Verbs a person does right after their name ("Alice prefers", "Bob said").
_PERSON_AFTER = re.compile(r"^\s+(?:lives|lived|prefers|preferred|likes|liked|wants|wanted|said|says|asked|asks|"
                           r"thinks|feels|joined|met|moved|approved|married|studies|studied)\b")
# Words that open notes and sentences: a capitalised word there is not a name unless it is
# capitalised elsewhere in the batch too.
_STARTERS = frozenset("""
    a an the i we you he she it they this that these those there here my our your his her its their
    remind remember note notes summary session lesson lessons decided decision team follow todo fyi please
    call email send check update ask tell make schedule book buy get add review fix meeting yesterday today
    tomorrow tonight also then however but and so ok okay thanks thank hi hello dear user customer client
    agent when if after before while since until during next last every each all some any no not never
    always maybe perhaps reminder important urgent action question answer issue problem task plan goal idea
    discussed agreed confirmed asked told met moved sent received keep use used try set need needs new old
    is are was were am be been do does did can could would should shall might must have has had
    """.split())
_NOT_NAMES = frozenset("todo fyi nb ps ok am pm eta asap".split())
_MONTHS_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday january february march april may "
                         "june july august september october november december mon tue tues wed thu thur thurs fri "
                         "sat sun jan feb mar apr jun jul aug sep sept oct nov dec".split())
_CAP_WORD = r"[A-Z][A-Za-z0-9]*(?:[-'’][A-Z][A-Za-z0-9]*)*"
_CAP_SPAN = re.compile(rf"{_CAP_WORD}(?: (?:of |de |van |von |du |da |&\s)?{_CAP_WORD})*")
_LOWER_WORD = re.compile(r"(?<![A-Za-z])[a-z][a-z]+(?![A-Za-z])")
# A position where a new sentence or clause starts (the capital tells nothing there).
_OPENER = re.compile(r"(?:^|[.!?:;\"“(\[\-–—•*>]\s*|\n\s*)$")
# PII placeholders (ingest's redaction): a changed one is a changed value of the same slot.
_PLACEHOLDER = re.compile(r"\[(PHONE|EMAIL|ID_CN|CARD|IP):[0-9A-Fa-f]+\]")
_ANY_PLACEHOLDER = re.compile(r"\[(?:PHONE|EMAIL|ID_CN|CARD|IP):[0-9A-Fa-f]+\]|\[SECRET\]")
_SENTENCE = re.compile(r"[^.!?。！？；;\n]+(?:[.!?。！？；;]+|$)")
_HAN = re.compile(r"[\u3400-\u9fff]")

# ---------------------------------------------------------------------------- Chinese
_TAG_KINDS = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "organisation",
              "nz": "thing"}
_TITLES_ZH = frozenset("经理 总监 总 老师 主任 先生 女士 小姐 医生 教授 老板 工 律师 科长 处长 部长 局长 院长 校长 "
                       "主管 组长 书记 董事长 总裁 博士 师傅 阿姨 叔叔".split())
_ORG_WORDS_ZH = frozenset("公司 集团 科技 银行 大学 学院 医院 物流 研究院 研究所 工作室 事务所 中心 有限公司 股份 "
                          "基金会 协会 实验室".split())


def _key(name: str) -> str:
    """The identity of a name within a scope: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", name).lower().split())


def _hash(*parts: str | None) -> str:
    return hashlib.md5("\x1f".join("\x00" if p is None else p for p in parts).encode("utf-8")).hexdigest()[:16]


def extractor_key(policy: Policy) -> str:
    """The extractor's identity: its version and the user dictionary (a change re-reads everything)."""
    return f"{EXTRACTOR_VERSION}:{_hash(*sorted(policy.entities.user_dict))[:8]}"


def sentences(text: str) -> list[str]:
    """The sentences of a memory (., !, ?, ;, their Chinese forms, line breaks), trimmed."""
    return [s.strip() for s in _SENTENCE.findall(text or "") if s.strip(" \t.!?。！？；;")]


# A word the batch writes in lower case at least this often, and this many times as often as
# capitalised, is a common word wherever it is capitalised.
_COMMON_MIN = 3
_COMMON_RATIO = 3
_ROMAN = re.compile(r"[IVXLC]{2,}")


def _english_word(word: str) -> bool:
    from ..text import lexicon
    from ..text import ENGLISH_STOP_WORDS

    return word in ENGLISH_STOP_WORDS or lexicon.is_english_word(word)


def _english_noun(word: str) -> bool:
    from ..text import lexicon

    return lexicon.noun_first(word)


@functools.lru_cache(maxsize=1)
def phatic_words() -> frozenset[str]:
    from .chat import phatic_words as words

    return words()


def _english_mentions(sentence: str, lowercase: frozenset, capitalised: frozenset, chat: bool = False,
                      common: frozenset = frozenset()) -> list[tuple[str, str, float]]:
    """(surface, kind, confidence) of each capitalised span of an English sentence. `lowercase`:
    words the batch writes in lower case; `capitalised`: words it capitalises inside a sentence."""
    found = []
    for match in _CAP_SPAN.finditer(sentence):
        words = match.group().split(" ")
        start = match.start()
        opener = bool(_OPENER.search(sentence[:start]))
        # strip common words that open the span ("Remind Alice" -> "Alice", "The Q4" -> "Q4")
        while words and (words[0].lower() in _STARTERS or words[0].lower() in _NOT_NAMES
                         or words[0].lower() in _MONTHS_DAYS or words[0].lower() in phatic_words()
                         or (opener and len(words) > 1 and _english_word(words[0].lower())
                             and not _english_noun(words[0].lower())
                             and " ".join(words[1:]).lower() in capitalised)):
            # ... and a common word opening the sentence before a name seen elsewhere ("Go Jon",
            # "Glad Max", "Is Spider-Man", "Learning German")
            if words[0].lower() in ("new", "old") and len(words) > 1:
                break                                     # New York, Old Trafford
            # a word after "Wow" or "Hey" still opens the sentence ("Wow Love it"); after "Remind"
            # it does not ("Remind Alice")
            opener = opener and words[0].lower() in phatic_words()
            start += len(words[0]) + 1
            words = words[1:]
        while words and (words[-1].lower() in _MONTHS_DAYS or words[-1].lower() in _NOT_NAMES):
            words = words[:-1]
        while words and (words[-1].lower() in ("of", "de", "van", "von", "du", "da", "&") or words[-1] == "I"):
            words = words[:-1]
        if not words:
            continue
        title = words[0].lower().rstrip(".") in _TITLES and len(words) > 1
        surface = re.sub(r"['’]s$", "", " ".join(words))
        lowered = surface.lower()
        if len(surface) < 2 or lowered in _MONTHS_DAYS or lowered in _NOT_NAMES:
            continue
        before, after = sentence[:start], sentence[start + len(surface):]
        person_like = ((_PERSON_AFTER.match(after) and lowered not in common)
                       or (re.match(r"^['’]s\b", after) and (not _english_word(lowered) or _english_noun(lowered))))
        if opener and len(words) == 1 and (lowered in _STARTERS or (
                lowered in lowercase and lowered not in capitalised and not _PERSON_AFTER.match(after))
                or (lowered not in capitalised and not _HAN.search(sentence) and _english_word(lowered)
                    and not _english_noun(lowered) and not (_PERSON_AFTER.match(after) and not chat))
                or (chat and lowered not in capitalised and not _HAN.search(sentence) and not person_like)):
            # in a chat turn, where every sentence opens with a capital and slang, typos and
            # interjections open many ("Sounds great", "Just wanted to say", "Nah", "Shure"), a
            # word that opens the sentence is a name only with evidence: the batch (or the lake)
            # capitalises it inside a sentence, or a person's verb follows it ("Priya joined",
            # "Carol's team"). In a note it needs none ("Initech has 40 seats", "Maria budget ...")
            continue
        if chat and len(words) == 1 and surface.isupper() and len(surface) >= 4 and _english_word(lowered):
            continue  # a word shouted in chat ("INTENSE"); in a note a code may be one ("ZEBRA-42")
        if len(words) == 1 and (lowered in common and _english_word(lowered) or _ROMAN.fullmatch(surface)):
            continue  # "a fellow Chef", "Warrior II"
        last = words[-1].lower().rstrip(".")
        prev = before.rstrip().rsplit(" ", 1)[-1].lower().rstrip(".") if before.strip() else ""
        if prev in _TITLES or title:
            found.append((surface, "person", CONFIDENCE["pattern"]))
        elif last in _ORG_SUFFIXES and len(words) > 1:
            found.append((surface, "organisation", CONFIDENCE["pattern"]))
        elif _PLACE_BEFORE.search(before):
            found.append((surface, "place", CONFIDENCE["pattern"]))
        elif _PERSON_AFTER.match(after) or re.match(r"^['’]s\b", after):
            found.append((surface, "person" if _PERSON_AFTER.match(after) else "thing",
                          CONFIDENCE["pattern"] if _PERSON_AFTER.match(after) else CONFIDENCE["capitalised"]))
        else:
            found.append((surface, "thing", CONFIDENCE["sentence_start" if opener else "capitalised"]))
    return found


@functools.lru_cache(maxsize=4)
def _chinese_tokenizer(user_dict: tuple[str, ...]):
    """A private jieba tokenizer (search's global one is left alone) with the user dictionary:
    (tokenizer, tags of known words, tags of user words, its part-of-speech tokenizer)."""
    from ..text import jieba_segmenter

    jieba = jieba_segmenter()  # initialised quietly, with the cache folder search uses
    import jieba.posseg

    tokenizer = jieba.Tokenizer()
    tokenizer.tmp_dir = jieba.dt.tmp_dir
    tokenizer.initialize()
    posseg = jieba.posseg.POSTokenizer(tokenizer)
    tags = posseg.word_tag_tab
    user_tags = {}
    for entry in user_dict:
        parts = entry.split()
        if not parts:
            continue
        if len(parts) > 2:
            raise InputError(f"[entities] user_dict entry {entry!r}: write \"word tag\" (tag nr, ns, nt or nz)")
        word, tag = parts[0], (parts[1] if len(parts) == 2 else "nz")
        if tag not in _TAG_KINDS:
            raise InputError(f"[entities] user_dict entry {entry!r}: unknown tag {tag!r}; use nr (person), "
                             f"ns (place), nt (organisation) or nz (other)")
        tokenizer.add_word(word, freq=max(tokenizer.suggest_freq(word), 1000), tag=tag)
        user_tags[word] = tag
    return tokenizer, tags, user_tags, posseg


# A word of jieba's dictionary this rare (its count in jieba's corpus) that carries a name's tag is
# read as a name only when CC-CEDICT glosses it as one: the dictionary holds phrases such as 注意安全
# (nz), 太多 (ns) and 白衬衫 (nr) with a count of 3.
_RARE_TAGGED = 10


def _surname(word: str) -> bool:
    return word[0] in _SURNAMES or word[:2] in _COMPOUND_SURNAMES


# Function words that follow a name and almost never end one: jieba's HMM joins them to a name it
# does not know ("张三住在杭州" -> 张三住, "王五去星河科技" -> 王五去). A three-character "name" of a
# one-character surname ending in one is the two-character name before it.
_AFTER_NAME = frozenset("在是说去住要和把被给让对从到也都就还又了的着过跟与已曾")


def _name_part(word: str) -> str:
    """`word` without a function word the HMM glued to a two-character name (张三住 -> 张三)."""
    if len(word) == 3 and word[0] in _SURNAMES and word[:2] not in _COMPOUND_SURNAMES and word[-1] in _AFTER_NAME:
        return word[:2]
    return word


# How friends and family call a person: 小 / 老 / 阿 before one character (小明, 老王, 阿强). Only
# a word CC-CEDICT does not hold: 小姐 "young lady", 老公 "husband" and 阿姨 "auntie" are words.
_NICKNAME_HEADS = frozenset("小老阿")


def _nickname(word: str) -> bool:
    if len(word) != 2 or word[0] not in _NICKNAME_HEADS or not _HAN.match(word[1]):
        return False
    return not is_chinese_word(word) or (word[1] in _SURNAMES and not common_word(word))  # 小林, not 小黄


def _chinese_mentions(sentence: str, user_dict: tuple[str, ...]) -> list[tuple[str, str, float]]:
    """(surface, kind, confidence) of each entity jieba finds in a Chinese sentence."""
    tokenizer, tags, user_tags, posseg = _chinese_tokenizer(user_dict)
    words = list(tokenizer.cut(sentence, HMM=True))
    known = tokenizer.FREQ  # holds every prefix of a word too, with frequency 0
    new_words = {w for w in words if len(w) > 1 and _HAN.match(w) and not known.get(w)}
    if new_words:
        # a word the dictionary lacks (often a name): the part-of-speech HMM cuts and tags such a
        # sentence better ("张伟住/在" -> "张伟/住/在"), at ~10x the cost, so only here
        pairs = [(p.word, p.flag) for p in posseg.cut(sentence, HMM=True)]
        words = [w for w, _ in pairs]
        guessed = {w: f for w, f in pairs if not known.get(w) and f in _TAG_KINDS}
        flags = [f for _, f in pairs]
    else:
        guessed, flags = {}, [tags.get(w) for w in words]
    found = []
    i = 0
    while i < len(words):
        word = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if word in user_tags:
            found.append((word, _TAG_KINDS[user_tags[word]], CONFIDENCE["user_dict"]))
        elif len(word) == 1 and word in _SURNAMES and nxt in _TITLES_ZH:
            found.append((word + nxt, "person", CONFIDENCE["pattern"]))  # 张经理
            i += 1
        elif word in _NICKNAME_HEADS and nxt in _SURNAMES and flags[i + 1] == "nr":
            found.append((word + nxt, "person", CONFIDENCE["new_word"]))  # 小 / 李 -> 小李
            i += 1
        elif len(word) == 1 and word in _SURNAMES and len(nxt) == 2 and nxt[-1] in _AFTER_NAME \
                and not known.get(nxt) and _HAN.match(nxt[0]):
            found.append((word + nxt[0], "person", CONFIDENCE["new_word"]))  # 王 / 五去 -> 王五 (去 is a verb)
            i += 1
        elif _HAN.match(word):
            tag = guessed.get(word) or tags.get(word)
            if not known.get(word) and _name_part(word) != word and (tag == "nr" or _surname(word)):
                word, tag = _name_part(word), "nr"      # 张三住 -> 张三 (the 住 is the next word's)
            kind = _TAG_KINDS.get(tag or "")
            new_word = not known.get(word)
            if nxt in _ORG_WORDS_ZH and (kind or new_word) and len(word) >= 2:
                found.append((word + nxt, "organisation", CONFIDENCE["pattern"]))  # 华信 + 科技
                i += 1
            elif new_word and 2 <= len(word) <= 3 and _surname(word) and not (
                    len(word) == 3 and word[:2] not in _COMPOUND_SURNAMES and is_chinese_word(word[1:])):
                # 张志强; not 段时间 (这段时间: a surname character before the word 时间)
                found.append((word, "person", CONFIDENCE["new_word"]))  # the HMM's tag for a new name varies
            elif (kind == "person" or new_word or word[1:] in _SURNAMES) and _nickname(word):
                found.append((word, "person", CONFIDENCE["new_word"]))  # 小明, 老王
            elif kind == "person" and not (2 <= len(word) <= 4 and _surname(word) and not common_word(word)):
                pass  # jieba tags some common words nr (索引, 脱敏): a Chinese name starts with a surname
            elif kind and len(word) >= 2 and not common_word(word) and (
                    new_word or known.get(word, 0) >= _RARE_TAGGED or cedict_name(word)):
                # 日志 ns "journal", 聊天 nz "to chat": a common word is no entity; nor is a word
                # jieba's dictionary holds only as a rare entry with a name's tag (太多 ns, 白衬衫 nr)
                found.append((word, kind, CONFIDENCE["tag" if not new_word else "new_word"]))
        i += 1
    return found


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
    from .chat import statement

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
    from .chat import split_turn

    turn = split_turn(text)
    return [turn.speaker, "true" if turn.role else "", turn.utterance] if turn else ["", "", ""]


def _first_stating(text: str) -> str | None:
    """The sentences of a turn's utterance that state something of substance (two content words at
    least), joined by \x1f; None when there is none."""
    from ..text import ENGLISH_STOP_WORDS
    from .chat import statement

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


# ---------------------------------------------------------------------------- merging facts
SAME = "same"


def compare_facts(older: dict[str, Any], newer: dict[str, Any]) -> str | None:
    """How `newer` relates to `older`, two similar facts of one entity: ``"same"`` (merge), the
    kind of change that makes it supersede `older` (``place``, ``phone``..., or the guard's
    ``number``, ``date``, ``negation``, ``antonym x/y``, ``swap x/y``), or None (two facts)."""
    va, vb = Counter(older["slot_values"] or []), Counter(newer["slot_values"] or [])
    if va and vb and va != vb:
        if _frame(older["content"], va) != _frame(newer["content"], vb):
            return None  # more than the value changed ("the team for invoices" / "for refunds"): two facts
        changed = sorted((va - vb) + (vb - va))
        placeholder = next((m.group(1).lower() for v in changed for m in [_PLACEHOLDER.fullmatch(v)] if m), None)
        return placeholder or "place"
    reason = contradiction(older["content"], newer["content"])
    if reason is None:
        return SAME
    if reason in DIFFERENT:
        return None
    kind, _, detail = reason.partition(" ")
    if kind == "swap":
        items = [v for v in detail.split("/") if v]
        if _frame(older["content"], items) != _frame(newer["content"], items):
            return None  # a swap within a different statement is not a change of this one
    elif kind in ("number", "date") and _frame(older["content"]) != _frame(newer["content"]):
        return None
    return kind


# Values a fact may change while staying the same statement: numbers, weekdays, month names.
_VALUE_WORDS = re.compile(
    r"\d+(?:[.:/-]\d+)*|\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|(?:周|星期|礼拜)[一二三四五六日天]|[一二三四五六七八九十两]+(?=[月日号点个位人元天周年次])")


def _frame(content: str, values=()) -> str:
    """The statement with its changeable values (the given slot values, numbers, weekdays and
    months) read as "0": two facts supersede only when this frame is the same."""
    text = _key(content)
    for value in sorted((_key(v) for v in values), key=len, reverse=True):
        text = text.replace(value, "0")
    return _VALUE_WORDS.sub("0", text)


def _masked(content: str, values: list[str]) -> str:
    """The sentence with its places and placeholders read as "0" (dedup reads numbers so)."""
    text = _key(content)
    for value in sorted(values or [], key=len, reverse=True):
        text = text.replace(_key(value), "0")
    return text


def link_facts(facts: pl.DataFrame, policy: Policy) -> pl.DataFrame:
    """merged_into, superseded_by, change, valid_from and valid_to for every fact of the entities in
    `facts` (all their rows), oldest first per entity (see the module docstring)."""
    schema = {"fact_id": pl.String, "merged_into": pl.String, "superseded_by": pl.String, "change": pl.String,
              "valid_from": pl.Datetime("us"), "valid_to": pl.Datetime("us")}
    if facts.height == 0:
        return pl.DataFrame(schema=schema)
    order = ["entity_id", "mentioned_at", *(["written"] if "written" in facts.columns else []), "fact_id"]
    facts = facts.sort(order).with_row_index("row").with_columns(
        pl.col("row").cast(pl.Int64))
    frame = facts.select("row", scope=pl.col("entity_id").hash(),
                         text=pl.struct("content", "slot_values").map_elements(
                             lambda r: _masked(r["content"], r["slot_values"]), return_dtype=pl.String))
    d = policy.dedup
    pairs = near_pairs(frame, bands=d.minhash_bands, rows=d.minhash_rows, threshold=d.near_jaccard)
    neighbours: dict[int, set[int]] = defaultdict(set)
    for a, b in pairs.select("a", "b").iter_rows():
        neighbours[max(a, b)].add(min(a, b))  # compared when the newer one comes
    records = facts.to_dicts()
    canonical: dict[int, int] = {}
    current: set[int] = set()
    superseded: dict[int, tuple[int, str]] = {}
    for row in records:
        i = row["row"]
        heads = sorted({canonical[j] for j in neighbours.get(i, ()) if canonical.get(j) in current})
        same, replaced = None, []
        for h in heads:
            verdict = compare_facts(records[h], row)
            if verdict == SAME:
                same = h
                break
            if verdict is not None:
                replaced.append((h, verdict))
        if same is not None:
            canonical[i] = same
            continue
        canonical[i] = i
        current.add(i)
        for h, why in replaced:
            current.discard(h)
            superseded[h] = (i, why)
    out = []
    for row in records:
        i = row["row"]
        head = canonical[i]
        by, why = superseded.get(head, (None, None))
        out.append((row["fact_id"], None if head == i else records[head]["fact_id"],
                    records[by]["fact_id"] if by is not None and head == i else None,
                    why if head == i else None,
                    records[head]["mentioned_at"], records[by]["mentioned_at"] if by is not None and head == i else None))
    return pl.DataFrame(out, schema=schema, orient="row")


# ---------------------------------------------------------------------------- the step
_SOURCE = """
    SELECT id, tenant, agent_id, user_id, content, content_hash, created_at FROM memories
    WHERE status NOT IN ('deleted', 'merged') AND type <> 'summary'
"""


def extract_entities(lake, as_of: datetime, policy: Policy | None = None, run_id: str | None = None) -> StepReport:
    """The nightly entity step: read new or changed memories, drop the facts of memories gone or
    changed since, and re-merge the facts of every entity they touch (see the module docstring)."""
    policy = policy or lake.policy
    run_id = run_id or lake.new_run_id("entities", as_of)
    extractor = extractor_key(policy)
    report = StepReport("extract_entities", as_of, run_id,
                        {"memories_read": 0, "memories_gone": 0, "mentions": 0, "entities_changed": 0})
    with lake.writer(purpose="extract entities") as con:
        todo = con.execute(
            f"""
            SELECT s.id, s.tenant, s.agent_id, s.user_id, s.content, s.content_hash, s.created_at
            FROM ({_SOURCE}) s LEFT JOIN entity_extractions e ON e.memory_id = s.id
            WHERE e.memory_id IS NULL OR e.content_hash <> s.content_hash OR e.extractor <> $x
               OR e.created_at <> s.created_at OR e.agent_id IS DISTINCT FROM s.agent_id
               OR e.user_id IS DISTINCT FROM s.user_id
            ORDER BY s.id
            """, {"x": extractor}).pl()
        (gone,) = con.execute(f"SELECT count(*) FROM entity_extractions WHERE memory_id NOT IN (SELECT id FROM ({_SOURCE}))"
                              ).fetchone()
        if todo.height == 0 and gone == 0:
            return report
        known = frozenset(name for (name,) in con.execute("SELECT DISTINCT lower(name) FROM entities").fetchall())
        mentions, todo, report.errors = _mentions_isolated(todo, policy, known)
        with transaction(con):
            con.execute(f"CREATE OR REPLACE TEMP TABLE entity_stale AS SELECT memory_id FROM entity_extractions "
                        f"WHERE memory_id NOT IN (SELECT id FROM ({_SOURCE}))")
            con.register("entity_todo", todo.select("id"))
            con.register("entity_mentions", mentions)
            con.execute(
                """
                CREATE OR REPLACE TEMP TABLE entity_touched AS
                SELECT DISTINCT entity_id FROM entity_facts
                WHERE memory_id IN (SELECT id FROM entity_todo) OR memory_id IN (SELECT memory_id FROM entity_stale)
                UNION SELECT DISTINCT entity_id FROM entity_mentions
                """)
            con.execute("DELETE FROM entity_facts WHERE memory_id IN (SELECT id FROM entity_todo) "
                        "OR memory_id IN (SELECT memory_id FROM entity_stale)")
            con.execute("DELETE FROM entity_extractions WHERE memory_id IN (SELECT id FROM entity_todo) "
                        "OR memory_id IN (SELECT memory_id FROM entity_stale)")
            con.execute(
                """
                INSERT INTO entity_facts BY NAME
                SELECT fact_id, entity_id, tenant, agent_id, user_id, memory_id, content, surface, mention_kind,
                       slot_values, confidence, mentioned_at, mentioned_at AS valid_from, $as_of AS as_of
                FROM entity_mentions
                """, {"as_of": as_of})
            con.register("entity_read", todo.select("id", "tenant", "agent_id", "user_id", "content_hash", "created_at"))
            con.execute("INSERT INTO entity_extractions SELECT id, tenant, agent_id, user_id, content_hash, created_at, "
                        "$x, $as_of FROM entity_read", {"x": extractor, "as_of": as_of})
            _relink(con, policy, as_of)
            report.counts = {"memories_read": todo.height, "memories_gone": int(gone), "mentions": mentions.height,
                             "entities_changed": con.execute("SELECT count(*) FROM entity_touched").fetchone()[0]}
            for name in ("entity_todo", "entity_mentions", "entity_read"):
                con.unregister(name)
            con.execute("DROP TABLE entity_touched")
            con.execute("DROP TABLE entity_stale")
    return report


def _mentions_isolated(todo: pl.DataFrame, policy: Policy, known: frozenset[str] = frozenset()
                       ) -> tuple[pl.DataFrame, pl.DataFrame, list[dict]]:
    """`extract_mentions` of all of `todo` at once (the words seen across it inform each scope's
    reading); when that raises, scope by scope, and a scope that raises is left out with its error
    (`step_error`): its memories are not marked read, so the next run reads them again. Returns
    the mentions, the memories read and the errors."""
    try:
        return extract_mentions(todo, policy, known), todo, []
    except MemoryLakeError:
        raise  # the lake's own settings (a bad user dictionary entry): one clear error, not a scope's
    except Exception:
        pass
    found, read, errors = [], [], []
    for (tenant, agent, user), part in todo.group_by(["tenant", "agent_id", "user_id"], maintain_order=True):
        try:
            found.append(extract_mentions(part, policy, known))
            read.append(part)
        except MemoryLakeError:
            raise
        except Exception as exc:
            errors.append(step_error("extract_entities", exc, item=f"{part.height} memor{'y' if part.height == 1 else 'ies'}", tenant=tenant,
                                     agent_id=agent, user_id=user))
    mentions = pl.concat(found, how="vertical_relaxed") if found else extract_mentions(todo.head(0), policy)
    return mentions, pl.concat(read) if read else todo.head(0), errors


def _relink(con: duckdb.DuckDBPyConnection, policy: Policy, as_of: datetime) -> None:
    """Re-merge the facts of the entities in temp table ``entity_touched`` and rebuild their rows
    in ``entities`` (an entity without facts left goes)."""
    # `written`: the history row of the memory's last write, so that two memories of one time (a
    # file's lines without created_at) are read in the order they were written
    facts = con.execute(
        "SELECT f.fact_id, f.entity_id, f.content, f.slot_values, f.mentioned_at, coalesce(w.seq, 0) AS written "
        "FROM entity_facts f LEFT JOIN (SELECT memory_id, max(seq) AS seq FROM memory_history "
        "WHERE change IN ('insert', 'update') GROUP BY memory_id) w ON w.memory_id = f.memory_id "
        "WHERE f.entity_id IN (SELECT entity_id FROM entity_touched)").pl()
    links = link_facts(facts, policy)
    con.register("entity_links", links)
    con.execute(
        """
        UPDATE entity_facts SET merged_into = l.merged_into, superseded_by = l.superseded_by, change = l.change,
               valid_from = l.valid_from, valid_to = l.valid_to
        FROM entity_links l WHERE entity_facts.fact_id = l.fact_id
        """)
    con.unregister("entity_links")
    con.execute("DELETE FROM entities WHERE entity_id IN (SELECT entity_id FROM entity_touched)")
    # the name: the spelling most mentions use (then the earliest); the kind: the most frequent one a
    # pattern or tag gave ("thing" only when nothing said more)
    con.execute(
        """
        INSERT INTO entities
        WITH spelled AS (
            SELECT entity_id, surface, count(*) AS n, min(mentioned_at) AS first FROM entity_facts
            WHERE entity_id IN (SELECT entity_id FROM entity_touched) GROUP BY ALL),
        kinds AS (
            SELECT entity_id, mention_kind, count(*) AS n FROM entity_facts
            WHERE entity_id IN (SELECT entity_id FROM entity_touched) GROUP BY ALL)
        SELECT f.entity_id, any_value(f.tenant), any_value(f.agent_id), any_value(f.user_id),
               (SELECT arg_max(surface, (n, -epoch(first), surface)) FROM spelled s WHERE s.entity_id = f.entity_id),
               (SELECT arg_max(mention_kind, (mention_kind <> 'thing', n, mention_kind)) FROM kinds k
                WHERE k.entity_id = f.entity_id),
               count(DISTINCT f.memory_id), list(DISTINCT f.memory_id ORDER BY f.memory_id),
               min(f.mentioned_at), max(f.mentioned_at), $as_of
        FROM entity_facts f WHERE f.entity_id IN (SELECT entity_id FROM entity_touched)
        GROUP BY f.entity_id
        """, {"as_of": as_of})


# ---------------------------------------------------------------------------- forget
@register_scrubber("entity_facts")
def _scrub_entity_facts(con: duckdb.DuckDBPyConnection) -> None:
    # A forgotten memory's facts go. A fact that repeated one of them now repeats the earliest
    # remaining repeat, which takes over its place in history; a fact it had superseded is
    # superseded by that heir, or current again when none is left. Only this table is read, so
    # the same statements clean every exported copy.
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE fact_heirs AS
        SELECT c.fact_id AS old_id, h.heir, c.superseded_by, c.change, c.valid_to, h.valid_from
        FROM entity_facts c
        JOIN (SELECT merged_into, arg_min(fact_id, (mentioned_at, fact_id)) AS heir,
                     min(mentioned_at) AS valid_from
              FROM entity_facts WHERE merged_into IS NOT NULL AND memory_id NOT IN (SELECT id FROM forget_ids)
              GROUP BY merged_into) h ON h.merged_into = c.fact_id
        WHERE c.memory_id IN (SELECT id FROM forget_ids) AND c.merged_into IS NULL
        """)
    con.execute(
        """
        UPDATE entity_facts SET merged_into = CASE WHEN entity_facts.fact_id = h.heir THEN NULL ELSE h.heir END,
               superseded_by = CASE WHEN entity_facts.fact_id = h.heir THEN h.superseded_by ELSE NULL END,
               change = CASE WHEN entity_facts.fact_id = h.heir THEN h.change ELSE NULL END,
               valid_to = CASE WHEN entity_facts.fact_id = h.heir THEN h.valid_to ELSE NULL END,
               valid_from = h.valid_from
        FROM fact_heirs h WHERE entity_facts.merged_into = h.old_id
        """)
    con.execute(
        """
        UPDATE entity_facts SET superseded_by = h.heir, valid_to = h.valid_from
        FROM fact_heirs h WHERE entity_facts.superseded_by = h.old_id
        """)
    con.execute(
        """
        UPDATE entity_facts SET superseded_by = NULL, change = NULL, valid_to = NULL
        WHERE superseded_by IN (SELECT fact_id FROM entity_facts WHERE memory_id IN (SELECT id FROM forget_ids))
        """)
    con.execute("DELETE FROM entity_facts WHERE memory_id IN (SELECT id FROM forget_ids)")
    con.execute("DROP TABLE fact_heirs")


@register_scrubber("entities")
def _scrub_entities(con: duckdb.DuckDBPyConnection) -> None:
    # An entity keeps only its other sources; one with none left goes (its name came from them).
    con.execute("CREATE OR REPLACE TEMP TABLE forgotten_list AS SELECT coalesce(list(id), []::VARCHAR[]) AS ids "
                "FROM forget_ids")
    con.execute(
        """
        UPDATE entities SET memory_ids = list_filter(memory_ids, m -> NOT list_contains(f.ids, m))
        FROM forgotten_list f WHERE list_has_any(entities.memory_ids, f.ids)
        """)
    con.execute("UPDATE entities SET mention_count = len(memory_ids) WHERE mention_count <> len(memory_ids)")
    con.execute("DELETE FROM entities WHERE mention_count = 0")
    con.execute("DROP TABLE forgotten_list")


# ---------------------------------------------------------------------------- reading
def scope_entity_facts(con: duckdb.DuckDBPyConnection, where: str = "", params: list | None = None) -> pl.DataFrame:
    """Entities with their facts, one row per fact (canonical or not), for `where` over ``e``
    (entities) - what listings and context packs read. Empty when the lake has no entity tables
    (a version published before them)."""
    has = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name IN ('entities', 'entity_facts')"
                      ).fetchone()[0]
    columns = {"entity_id": pl.String, "tenant": pl.String, "agent_id": pl.String, "user_id": pl.String,
               "name": pl.String, "kind": pl.String, "mention_count": pl.Int64, "first_mentioned": pl.Datetime("us"),
               "last_mentioned": pl.Datetime("us"), "fact_id": pl.String, "memory_id": pl.String,
               "content": pl.String, "confidence": pl.Float64, "mentioned_at": pl.Datetime("us"),
               "merged_into": pl.String, "superseded_by": pl.String, "change": pl.String,
               "valid_from": pl.Datetime("us"), "valid_to": pl.Datetime("us")}
    if has < 2:
        return pl.DataFrame(schema=columns)
    return con.execute(
        f"""
        SELECT e.entity_id, e.tenant, e.agent_id, e.user_id, e.name, e.kind, e.mention_count, e.first_mentioned,
               e.last_mentioned, f.fact_id, f.memory_id, f.content, f.confidence, f.mentioned_at, f.merged_into,
               f.superseded_by, f.change, f.valid_from, f.valid_to
        FROM entities e JOIN entity_facts f USING (entity_id)
        {('WHERE ' + where) if where else ''}
        ORDER BY e.tenant, e.agent_id NULLS FIRST, e.user_id NULLS FIRST, e.entity_id, f.mentioned_at, f.fact_id
        """, params or []).pl().cast(columns)


def published_entity_facts(version: Path) -> pl.DataFrame:
    """``scope_entity_facts`` of an export version folder (its ``tables/*.parquet``), e.g. to
    rebuild a scope's context.md after a forget."""
    con = duckdb.connect(":memory:")
    try:
        for name in ("entities", "entity_facts"):
            path = version / "tables" / f"{name}.parquet"
            if path.is_file():
                con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{str(path).replace(chr(39), chr(39) * 2)}')")
        return scope_entity_facts(con)
    finally:
        con.close()


def group_facts(rows: list[dict[str, Any]], allowed: set[str] | None = None) -> list[dict[str, Any]]:
    """One entity's fact rows as merged facts: each fact with its text (the earliest mention), its
    sources, mention count, confidence, valid_from / valid_to and whether it is current, oldest
    first. With `allowed` (memory ids), only mentions from those memories count; a fact whose
    superseding fact has no allowed mention is current again."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if allowed is None or row["memory_id"] in allowed:
            groups[row["merged_into"] or row["fact_id"]].append(row)
    head_of = {row["fact_id"]: row for row in rows}
    facts = []
    for head_id, members in groups.items():
        members.sort(key=lambda r: (r["mentioned_at"], r["fact_id"]))
        head = head_of.get(head_id, members[0])
        by = head.get("superseded_by")
        current = by is None or by not in groups
        confidence = 1.0
        for member in members:
            confidence *= 1.0 - member["confidence"]
        facts.append({
            "fact_id": head_id, "content": members[0]["content"],
            "sources": sorted({m["memory_id"] for m in members}), "mentions": len(members),
            "confidence": round(1.0 - confidence, 3), "valid_from": members[0]["mentioned_at"],
            "valid_to": None if current else head.get("valid_to"), "current": current,
            "superseded_by": None if current else by, "change": None if current else head.get("change"),
        })
    facts.sort(key=lambda f: (f["valid_from"], f["fact_id"]))
    return facts


def list_entities(lake, *, tenant: str | None = None, agent: str | None = None, user: str | None = None
                  ) -> dict[str, Any]:
    """The entities of a scope (read-only, also while a run holds the lake): ``{"entities": [...],
    "notes": [...]}``, most mentioned first; each with its current facts (merged: sources and
    counts) and its history (superseded facts, with what changed and when). An unknown tenant,
    agent or user is an InputError naming the known ones."""
    check_scope(lake, tenant, agent, user)
    where, params = [], []
    for column, value in (("tenant", tenant), ("agent_id", agent), ("user_id", user)):
        if value is not None:
            where.append(f"e.{column} = ?")
            params.append(value)
    with lake.reading() as (con, _source, note):
        rows = scope_entity_facts(con, " AND ".join(where), params)
        (memories,) = con.execute(
            "SELECT count(*) FROM memories WHERE status NOT IN ('deleted', 'merged')"
            + "".join(f" AND {w[2:]}" for w in where), params).fetchone()
        read = 0
        if con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'entity_extractions'"
                       ).fetchone()[0]:
            (read,) = con.execute("SELECT count(*) FROM entity_extractions e"
                                  + (" WHERE " + " AND ".join(where) if where else ""), params).fetchone()
        disputes: dict[frozenset, str] = {}
        if con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'conflicts'").fetchone()[0]:
            # dedup's open contradictions: a user decides between the two memories, so a fact the
            # other one supersedes here is disputed, not settled (the conflict queue says so too)
            disputes = {frozenset(pair): cid for cid, *pair in con.execute(
                "SELECT conflict_id, memory_id, other_memory_id FROM conflicts WHERE status = 'open' "
                "AND kind = 'contradiction' AND other_memory_id IS NOT NULL").fetchall()}
    entities = []
    for (entity_id,), part in rows.group_by(["entity_id"], maintain_order=True):
        first = part.row(0, named=True)
        facts = _disputed(group_facts(part.to_dicts()), disputes)
        entities.append({
            "entity_id": entity_id, "tenant": first["tenant"], "agent_id": first["agent_id"],
            "user_id": first["user_id"], "name": first["name"], "kind": first["kind"],
            "mention_count": first["mention_count"], "first_mentioned": iso(first["first_mentioned"]),
            "last_mentioned": iso(first["last_mentioned"]),
            "facts": [_fact_json(f) for f in reversed(facts) if f["current"]],
            "history": [_fact_json(f) for f in reversed(facts) if not f["current"]],
        })
    entities.sort(key=lambda e: (-e["mention_count"], e["tenant"], e["agent_id"] or "", e["user_id"] or "", e["name"]))
    notes = [note] if note else []
    if not entities:
        scope = _scope_text(tenant, agent, user)
        if memories == 0:
            notes.append(f"no entities in {scope}: it has no active memories")
        elif read == 0:
            its = "its one memory was" if memories == 1 else f"its {memories} memories were"
            notes.append(f"no entities in {scope}: {its} not read for entities yet "
                         f"(the nightly run's extract_entities step does it: memory-lake run nightly)")
        else:
            its = "its one memory names" if memories == 1 else f"none of its {memories} memories names"
            what = "no person, place, organisation or thing" if memories == 1 else "a person, place, organisation or thing"
            notes.append(f"no entities in {scope}: {its} {what}")
    return {"entities": entities, "notes": notes}


def _disputed(facts: list[dict[str, Any]], disputes: dict[frozenset, str]) -> list[dict[str, Any]]:
    """`facts` with ``disputed``: the open contradiction between a superseded fact's memory and the
    memory of the fact that superseded it (None when there is none)."""
    by_id = {f["fact_id"]: f for f in facts}
    for fact in facts:
        newer = by_id.get(fact.get("superseded_by") or "")
        fact["disputed"] = next((disputes[frozenset((a, b))] for a in fact["sources"] for b in (newer or {}).get(
            "sources", ()) if frozenset((a, b)) in disputes), None)
    return facts


def _fact_json(fact: dict[str, Any]) -> dict[str, Any]:
    return {"fact_id": fact["fact_id"], "content": fact["content"], "sources": fact["sources"],
            "mentions": fact["mentions"], "confidence": fact["confidence"], "valid_from": iso(fact["valid_from"]),
            "valid_to": iso(fact["valid_to"]), "superseded_by": fact["superseded_by"], "change": fact["change"],
            "disputed": fact.get("disputed")}


def _scope_text(tenant: str | None, agent: str | None, user: str | None) -> str:
    named = [f"{label} {value}" for label, value in (("tenant", tenant), ("agent", agent), ("user", user))
             if value is not None]
    return "scope " + ", ".join(named) if named else "the lake"
