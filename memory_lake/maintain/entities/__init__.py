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

**Merging** uses dedup's machinery: MinHash candidate pairs among an entity's facts, then dedup's
contradiction guard: the same fact merges into the older one, a changed value supersedes it (both
kept, never a silent merge), two different things stay two facts (``facts.py`` has the rules).

**Incremental**: ``entity_extractions`` records each memory read, with its content hash, scope,
creation time and the extractor version (with the user dictionary's hash). A run reads only new or
changed memories, drops the facts of memories that were forgotten or merged since, and recomputes
only the entities they touch; a second run with nothing new reads nothing.

Forget reaches both tables (scrubbers registered here): a forgotten memory's facts go, the facts
that repeated or superseded them are repaired, and an entity with no source left goes.

The parts: ``rows`` (sentences, name keys and ids, confidence per signal, the extractor's
identity), ``english`` and ``chinese`` (the mentions of one sentence), ``extract`` (the mentions
of a batch of memories, chat turns and their speakers), ``facts`` (merging and superseding),
``step`` (the ``extract_entities`` step and the forget's scrubbers), ``listing`` (what listings
and context packs read).
"""

from __future__ import annotations

from .chinese import _chinese_mentions, _chinese_tokenizer
from .english import _english_mentions, phatic_words
from .extract import extract_mentions
from .facts import SAME, compare_facts, link_facts
from .listing import FACT_ROW_FIELDS, group_facts, list_entities, published_entity_facts, scope_entity_facts
from .listing import has_entity_tables, scope_fact_digests
from .rows import CONFIDENCE, EXTRACTOR_VERSION, KINDS, extractor_key, sentences
from .step import extract_entities

__all__ = [
    "CONFIDENCE", "EXTRACTOR_VERSION", "KINDS", "SAME", "_chinese_mentions", "_chinese_tokenizer", "_english_mentions",
    "FACT_ROW_FIELDS", "compare_facts", "extract_entities", "extract_mentions", "extractor_key", "group_facts", "link_facts",
    "has_entity_tables", "list_entities", "phatic_words", "published_entity_facts", "scope_entity_facts", "scope_fact_digests", "sentences",
]
