"""British and American words, English (the ``breame`` package, 0.1.2, Apache 2.0: Wikipedia's
lists of words used in one variety, of words with a meaning in each, and 1,700 spellings).

A word is the other variety's word for what its gloss lists ("dummy": "rubber teat for babies (US:
pacifier)"; "skint": "(US: broke)"; "kip": "(slang) sleep."), and organised is organized. Only the
listed words and a leading list of one- or two-word meanings are read from a gloss.
"""

from __future__ import annotations

import functools
import re

from .cedict import _LEADING
from .files import breame_dir
from .wordnet import _DETERMINERS, _POS, _bases, _english_forms, _english_synsets


# "(US: pacifier)", "(US sneakers)", "(UK: crisps)", "(US and UK also: truck)", "(US usu.: faucet, spigot)"
_OTHER_VARIETY = re.compile(r"\((?:also )?(?:US|UK|U\.S\.)(?: and UK also| usually| usu\.| equivalent| mostly)?\s*:?\s*([^()]*)\)")
_GLOSS_NOTE = re.compile(r"^\s*\((?:informal|slang|colloquial|coll\.|n\.|v\.|adj\.|adv\.|dated|derogatory|vulgar)[^)]*\)\s*",
                         re.IGNORECASE)
_EQUIVALENT_WORDS = re.compile(r"[a-z][a-z'&-]*(?: [a-z][a-z'&-]*){0,2}")
_NOT_EQUIVALENT = re.compile(r"^(?:equivalent(?: to)?|usually|also|often|sometimes|esp\.?|the same term for|cf\.?|"
                             r"see|related|similar to|e\.g\.?)\s+")
_NOT_AN_ITEM = frozenset({"usu", "etc", "e.g", "as in", "i.e", "esp", "informal", "slang"})


def _items(text: str) -> list[str]:
    """The pieces of a list ("garden shears, pruners or clippers"), lower case, without an article
    or a hedge ("equivalent to freeway" -> "freeway")."""
    out = []
    for item in re.split(r",|;|/| or ", text):
        item = item.strip(" .'\"").lower()
        while True:
            trimmed = _NOT_EQUIVALENT.sub("", _LEADING.sub("", item)).strip()
            if trimmed == item:
                break
            item = trimmed
        out.append(item)
    return out


def _word_item(item: str, words: int) -> bool:
    return (bool(_EQUIVALENT_WORDS.fullmatch(item)) and len(item.split()) <= words
            and item not in _DETERMINERS and item not in _NOT_AN_ITEM)


def _gloss_equivalents(gloss: str) -> list[str]:
    """What a glossary entry says the word is: the other variety's words it lists ("(US: pacifier)",
    up to three words each), and the leading list of its meaning while each item has at most two
    words ("(slang) exhausted, broken, originally ..." -> exhausted, broken; "pencil eraser")."""
    text = " ".join(gloss.split())
    found = [item for listed in _OTHER_VARIETY.findall(text) for item in _items(listed) if _word_item(item, 3)]
    lead = text
    while _GLOSS_NOTE.match(lead):
        lead = _GLOSS_NOTE.sub("", lead, count=1)
    lead = re.split(r"[(.;:\"]| – | - ", lead, maxsplit=1)[0]
    for item in _items(lead):
        if not _word_item(item, 2):
            break                                         # a definition, not a list of words
        found.append(item)
    return found


@functools.lru_cache(maxsize=1)
def _breame() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """({English word or phrase: the words the other variety of English says for it}, {a word only
    one variety uses: what its gloss says it is}), from the glossaries in the ``breame`` package
    (Apache 2.0; Wikipedia's lists of British and American words): "dummy" British "rubber teat for
    babies (US: pacifier)", "skint" "(US: broke)", "kip" "(slang) sleep.", and its 1,700 spellings
    (organised / organized). Empty without the package."""
    if breame_dir() is None:
        return {}, {}
    import importlib

    data = {name: importlib.import_module(f"breame.data.{name}")
            for name in ("british_terms_constants", "american_terms_constants", "meaning_constants",
                         "spelling_constants")}
    table: dict[str, set[str]] = {}
    only: dict[str, set[str]] = {}

    def link(terms: list[str], found: list[str], own: bool) -> None:
        for term in terms:
            for other in found:
                if other != term:
                    table.setdefault(term, set()).add(other)
                    table.setdefault(other, set()).add(term)
                    if own:
                        only.setdefault(term, set()).add(other)

    def co_listed(gloss: str) -> None:
        # "rubbish: (US: garbage, trash)": the words one parenthetical lists are one thing
        for listed in _OTHER_VARIETY.findall(" ".join(gloss.split())):
            items = [item for item in _items(listed) if _word_item(item, 3)]
            link(items, items, own=False)

    for glossary in (data["british_terms_constants"].BRITISH_ENGLISH_ONLY_TERMS,
                     data["american_terms_constants"].AMERICAN_ENGLISH_ONLY_TERMS):
        for key, gloss in glossary.items():
            terms = [t for t in (k.strip().lower() for k in key.split(",")) if t]
            link(terms, _gloss_equivalents(gloss), own=True)
            co_listed(gloss)
    for key, senses in data["meaning_constants"].DIFFERENT_MEANINGS_US_UK_COMMON.items():
        # a word with a meaning in each variety (pants, chips, rubber): its listed words only
        for variety, gloss in senses.items():
            if variety != "Common" and isinstance(gloss, str):
                link([key.strip().lower()], _gloss_equivalents(gloss), own=False)
                co_listed(gloss)
    for british, american in data["spelling_constants"].BRITISH_ENGLISH_SPELLINGS.items():
        link([british], [american], own=False)
    return ({term: frozenset(others) for term, others in table.items()},
            {term: frozenset(others) for term, others in only.items()})


def _variety_synonyms(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why one stretch is the other variety's word for the other (dummy / pacifier, skint / broke,
    organised / organized), or, for a word only one variety uses, why what its gloss says it is
    shares a WordNet synset with the other (kip "sleep" / slumber); None otherwise."""
    table, only = _breame()
    if not table:
        return None
    def forms(words: tuple[str, ...]) -> list[str]:
        found = [f.replace("_", " ") for f in _english_forms(words)]
        if len(words) == 1:                               # revising -> revise, dummies -> dummy
            found += sorted({b for pos in _POS for b in _bases(words[0], pos)} - set(found))
        return found

    forms_x, forms_y = forms(left), forms(right)
    for fx, fy in ((fx, fy) for fx in forms_x for fy in forms_y):
        if fy in table.get(fx, ()) or fx in table.get(fy, ()):
            return f"breame {fx}/{fy}"
    for first, second in ((forms_x, right), (forms_y, left)):
        target = _english_synsets(second)
        for form in first:
            for other in sorted(only.get(form, ())):
                shared = _english_synsets(tuple(other.split())).keys() & target.keys()
                if shared:
                    synset = sorted(shared)[0]
                    return f"breame {form} '{other}' -> wordnet {synset[0]} {synset[1]:08d}"
    return None
