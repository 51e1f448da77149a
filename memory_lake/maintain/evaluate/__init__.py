"""The summary evaluator: four metrics that gate a summary before an agent relies on it (seed 000
"质量评估": 信息保留率 ≥ 90%, 压缩比 ≥ 3x, 可读性 ≥ 0.8, 准确性 ≥ 95%; thresholds and ``max_tokens`` in
``Policy().summaries``).

It works on any text: ``evaluate_summary(source_texts, summary_markdown)`` takes the source as a
list of texts (memories, turns, paragraphs) and a Markdown summary, and needs no lake.

Units
-----
* A **source sentence** is a piece of a source text between line breaks and sentence ends
  (``. ! ?`` followed by a space, ``。！？`` anywhere; not after ``Dr.``, ``St.``, ``e.g.`` or an
  initial, :data:`ABBREVIATIONS`).
* A **summary statement** is a list item (``-``, ``*``, ``+``, ``1.``; one statement however long)
  or a sentence of a non-list line. Headings (``#``), a line that is only bold text, a short non-list line
  ending in ``:`` (at most 40 characters, ``Decisions:``), rules (``---``) and table separators are not statements. Markdown emphasis and
  field labels of the seed's structure (``What:``, ``Why:``, ``时间：`` ...) are ignored.
* **Key facts** of a text (:func:`extract_facts`):
  - *numbers*: digit runs as whole tokens (``500`` never matches ``1500``), thousands commas and
    ``万``/``亿``/``千``/``k``/``thousand``/``million``/``billion`` multipliers folded (``1,500``,
    ``1500`` and ``0.15万`` are one number; ``42k`` = ``4.2万`` = ``4.2w``, ``w`` only in Chinese text), English number words two to twelve and the tens, and
    Chinese numerals before a measure word or after ``第`` (a lone ``一`` is an article, not a count).
    An amount keeps the currency of the sign, code or word next to it (:data:`CURRENCIES`: ``$50``,
    ``50 dollars``, ``50 USD``, ``¥``, ``6480元``, ``120欧元``); each names the currencies it can mean
    (``$`` any dollar, ``¥`` yen or yuan), and the sign or word is part of the amount (no name, no
    content word);
  - *dates*: ISO ``2026-03-04`` (also ``/`` and ``.``), ``2026年3月4日``, ``3月4日``, ``March 4``,
    ``4 March 2026``, ``March 2026``, ``3/14/2026`` when the day is unambiguous, and weekdays
    (``Friday``, ``周五``). Two dates match when month and day agree and their years agree where both
    give one, so ``March 4``, ``2026-03-04`` and ``3月4日`` are one fact;
  - *times*: ``22:00``, ``10pm``, ``晚上10点``, ``3点半``. ``hh:mm`` without am/pm is the 24-hour
    clock; a Chinese hour without a period word (上午, 晚上 ...) could be either and matches both
    (``10点`` is 10:00 or 22:00); an hour in Chinese numerals needs a period word, minutes or 钟
    (``一点`` alone is "a little");
  - *names*: English capitalised spans (``Alice``, ``PostgreSQL``, ``Q3``, ``New York``). A capitalised
    word at a sentence start (no letter before it since the start or the last colon, so a leading
    timestamp does not count) is a name only when it is a speaker (a label that starts two lines or
    more of the source, ``Alice: ...``), an acronym or mixed-case word, or the same word is
    capitalised elsewhere in the texts; letters glued to a digit (``4S``, ``5G``) are no name; function and discourse words and chat roles
    (:data:`NOT_NAMES`: User, Assistant ...) never are. Accented letters are letters (``Inês``). In a summary statement a
    sentence-initial word that is a source name, or of which no form occurs in the source
    (``Payments`` occurs as ``payment``), is a name too. Chinese names are jieba's part-of-speech
    tags ``nr`` (people), ``ns`` (places), ``nt`` (organisations) and ``nz`` (other proper nouns)
    of two characters or more, except the pleasantries jieba's dictionary mistags
    (:data:`NOT_NAMES_ZH`); a person name (``nr``) must start with a common family name
    (:data:`COMMON_SURNAMES`, also after 老/小/阿) and not be a frequent dictionary word
    (:data:`COMMON_WORD_FREQ`). Person references jieba misses are names too: 老/小/阿 + family name
    (``老周``, ``小王``) or family name + title or kinship word (:data:`PERSON_TITLES`: ``刘工``,
    ``王总``, ``张经理``, ``李姐``), on jieba word boundaries (``周总结``, ``小程序`` are none);
  - *decisions* and *todos*: whole sentences with a cue (:data:`DECISION_CUES`, :data:`TODO_CUES`,
    English and Chinese; an acknowledgement ``Agreed,`` / ``同意，`` and a recollection ``我记得``
    are no cue).
  Only **informative** content holds key facts. A sentence is informative when it holds a *hard*
  fact outside its speaker label (a number in digits, a date, a time, a capitalised name, a
  Chinese person name; ``Anna: ...`` says who speaks, not what) or a category label
  (``Decision:``, ``TODO:``, ``决定：``, ``待办：``). A decision or todo is a key fact only in an
  informative sentence that is not a question (``Ha, agreed.`` is conversation); spelled-out counts
  (``three``, ``两个``, ``第一``) and jieba places/organisations are key facts only in an informative
  sentence, the latter only when they end in a place or institution word (:data:`_PLACE_ENDS`:
  ``区``, ``市``, ``大学``, ``部`` ...). jieba's ``nz`` words and other place tags are too often common
  words (a thing, to go on stage) to be key facts; they are still names in summary statements.
  A fact that recurs in the source counts once (numbers, names by value; dates and times when they
  match; statements whose content words overlap by Jaccard ≥ 0.8).
* **Content words** are the search tokeniser's tokens (stemmed English, jieba words for Chinese,
  stop words dropped) of a text with its numbers, dates and times cut out.
* **Polarity**: a negation word (``not``, ``never``, ``n't`` ..., ``不``, ``没``, ``未`` ... as jieba
  words, or a word jieba does not know that starts with one: ``未设``) or a contrast (``rather
  than``, ``instead of``, ``而非``) negates the content words after it up to the end of its clause
  (its *scope*; in Chinese also up to ``的``). Two texts conflict when more than half of a scope of
  one occurs in the other and no negation there shares a word with it (``decided not to migrate X``
  against ``decided to migrate X``); a summary that leaves out a negated clause of its source does
  not conflict with it. Two texts conflict too when one holds a word of :data:`OPPOSITES` (a short
  list of common opposites: like / dislike, increase / decrease, accept / reject, 喜欢 / 讨厌,
  增加 / 减少 ...; English by stem, Chinese as substrings) where the other holds its opposite and
  neither holds both, both negated or neither (``doesn't like`` and ``dislikes`` agree, and a
  negation's scope is not contradicted by the opposite of one of its words). Conflicting texts are
  never close.

Metrics
-------
* ``retention`` = source key facts present in the summary / source key facts (1.0 when the source
  has none). A number, date, time is present when the summary holds a matching one; a name when its
  text occurs in the summary (case-insensitive, whole words for Latin script); a decision or todo
  when some summary statement is close to it: the Dice coefficient of their content words is at
  least :data:`RETAIN_DICE`, or, for texts without Chinese characters, the MiniLM cosine is at least
  :data:`RETAIN_COSINE` (MiniLM does not read Chinese). ``missing_facts`` lists the absent ones as
  ``"<kind>: <text>"`` in source order.
* ``compression`` = source tokens / summary tokens, counted with the embedding model's tokenizer
  (``search.count_tokens``; CJK one token per character). 0.0 for an empty summary.
* ``readability`` = a 0..1 structure score, the weighted sum of :data:`READABILITY_WEIGHTS`:
  ``headings`` 0.15 (1 when the summary has a heading), ``list_items`` 0.25 (share of statement
  lines that are list items), ``one_fact_per_line`` 0.25 (mean over statement lines of
  1 / sentences on the line), ``sections`` 0.15 (1 when a heading names a seed category: events,
  decisions, lessons, todos, 事件, 决策, 教训, 待办 ...; 0.5 when there are two headings or more
  otherwise), ``line_length`` 0.20 (share of statement lines at most :data:`MAX_LINE_WIDTH` columns
  wide, a CJK character two columns).
* ``accuracy`` = summary statements supported by the source / summary statements (0.0 when there
  are none). A statement is supported by ONE source sentence that holds every number, date, time
  and name of the statement (matched as above; an amount in a currency the sentence's amount can
  be in, or either without one: ``50 euros`` is not backed by ``50 dollars``; a name as text, an acronym also as the initials of
  consecutive words: ``PB`` = ``personal best``), does not conflict with it in polarity, and is
  close to it: at least :data:`SUPPORT_CONTAINMENT` of the statement's content words occur in the
  sentence, or (no Chinese characters) their MiniLM cosine is at least :data:`SUPPORT_COSINE`.
  A sentence that ties a word of the statement to another value never supports it (the *anchors*
  of a value are the nearest content words before and after it in its clause, measure words
  skipped): ``月薪45k`` is not backed by a sentence saying ``月薪42k`` without 45k, nor ``3名医生、
  2名护士`` by ``2名医生和3名护士`` (values swapped between words).
  A line that condenses two source sentences is supported by the two JOINTLY when each of its
  clauses (pieces between ``; , ( )``; a piece of only values and names joins the clause before it)
  is supported by one of them in the same way, with at least :data:`JOINT_CONTAINMENT` of the
  clause's content words, and neither of the two ties a word of the whole line to another value.
  ``unsupported_statements`` lists the others as written (without the list marker).

A summary passes when retention, compression, readability and accuracy reach their thresholds and
it has at most ``max_tokens`` tokens; ``failed`` names the metrics that did not.

Modules
-------
The package is split by the units and metrics above; this module re-exports its names.

* ``fact``: :class:`Fact`, a key fact, and ``_Analysed``, an analysed text;
* ``numerals``: numbers (digits, multipliers, English and Chinese number words);
* ``dates``: dates and times, and when two of them match;
* ``names``: English and Chinese names, the speaker labels and the name context of the texts;
* ``sentences``: source sentences and summary statements (:func:`split_sentences`,
  :func:`summary_statements`);
* ``words``: content words and their overlap (Dice, Jaccard, containment);
* ``polarity``: negation scopes and polarity conflicts;
* ``anchors``: the words each value qualifies, and value conflicts;
* ``extract``: an analysed text and its key facts (:func:`extract_facts`);
* ``cosine``: the MiniLM cosines the word-overlap tests fall back to;
* ``retention``, ``compression``, ``readability``, ``accuracy``: one metric each;
* ``score``: :class:`SummaryScore` and :func:`evaluate_summary`.
"""

from __future__ import annotations

from .accuracy import JOINT_CONTAINMENT, SUPPORT_CONTAINMENT, SUPPORT_COSINE
from .extract import DECISION_CUES, TODO_CUES, extract_facts
from .fact import Fact
from .names import COMMON_SURNAMES, COMMON_WORD_FREQ, NOT_NAMES, NOT_NAMES_ZH, PERSON_TITLES
from .numerals import CURRENCIES
from .polarity import OPPOSITES
from .readability import CATEGORY_WORDS, MAX_LINE_WIDTH, READABILITY_WEIGHTS
from .retention import RETAIN_COSINE, RETAIN_DICE
from .score import SummaryPolicy, SummaryScore, evaluate_summary
from .sentences import ABBREVIATIONS, LABELS, split_sentences, summary_statements

# The pieces `summaries.Coverage` reuses to test which key facts a summary line holds.
from .extract import _analyse, _unique_facts  # noqa: F401
from .names import _build_context  # noqa: F401
from .polarity import _polarity_conflict  # noqa: F401
from .retention import _atomic_present  # noqa: F401
from .sentences import _clean_markdown  # noqa: F401
from .words import _dice  # noqa: F401

__all__ = [
    "SummaryScore", "SummaryPolicy", "evaluate_summary", "extract_facts", "split_sentences", "summary_statements",
    "Fact",
    "RETAIN_DICE", "RETAIN_COSINE", "SUPPORT_CONTAINMENT", "SUPPORT_COSINE", "JOINT_CONTAINMENT",
    "MAX_LINE_WIDTH", "READABILITY_WEIGHTS", "CATEGORY_WORDS",
    "ABBREVIATIONS", "LABELS", "NOT_NAMES", "NOT_NAMES_ZH", "COMMON_SURNAMES", "COMMON_WORD_FREQ", "PERSON_TITLES",
    "DECISION_CUES", "TODO_CUES", "CURRENCIES", "OPPOSITES",
]
