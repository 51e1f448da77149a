"""**Extraction** in English (seed 002 "实体记忆"), with no LLM: capitalised spans ("Alice", "New
York", "Acme Corp"), read by their neighbours: a title before a name makes a person (``Dr Smith``),
a company suffix an organisation (``Acme Corp``), ``in`` / ``from`` / ``near`` / ``moved to`` a
place (``lives in Paris``), a person's verb after a name a person (``Alice prefers``). A
capitalised word that opens a sentence counts only when it is not a common word (stop words, words
that open notes such as ``Remind`` or ``Decided``, and any word the same batch also writes in lower
case). In a chat turn such a word needs evidence that it is a name (``_english_mentions``).
"""

from __future__ import annotations

import functools
import re

from .rows import CONFIDENCE, _HAN

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
# Latin letters with accents count as letters (José García, Málaga, Zürich, Łódź): Latin-1's capitals
# and every letter of Latin Extended-A and -B.
_UPPER = "A-ZÀ-ÖØ-Þ\u0100-\u024f"
_LETTER = "A-Za-z0-9À-ÖØ-öø-ÿ\u0100-\u024f"
_CAP_WORD = rf"[{_UPPER}][{_LETTER}]*(?:[-'’][{_UPPER}][{_LETTER}]*)*"
_CAP_SPAN = re.compile(rf"{_CAP_WORD}(?: (?:of |de |van |von |du |da |&\s)?{_CAP_WORD})*")
_LOWER_WORD = re.compile(r"(?<![A-Za-z])[a-z][a-z]+(?![A-Za-z])")
# A position where a new sentence or clause starts (the capital tells nothing there).
_OPENER = re.compile(r"(?:^|[.!?:;\"“(\[\-–—•*>]\s*|\n\s*)$")


# A word the batch writes in lower case at least this often, and this many times as often as
# capitalised, is a common word wherever it is capitalised.
_COMMON_MIN = 3
_COMMON_RATIO = 3
_ROMAN = re.compile(r"[IVXLC]{2,}")


def _english_word(word: str) -> bool:
    from ...text import lexicon
    from ...text import ENGLISH_STOP_WORDS

    return word in ENGLISH_STOP_WORDS or lexicon.is_english_word(word)


def _english_noun(word: str) -> bool:
    from ...text import lexicon

    return lexicon.noun_first(word)


@functools.lru_cache(maxsize=1)
def phatic_words() -> frozenset[str]:
    from ..chat import phatic_words as words

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
