"""Short forms that name what their long form names: an English acronym or clipping (HR / human
resources, app / application: `_shortened`) and a Chinese abbreviation (社保 / 社会保险:
`_abbreviation`), read from the words themselves where the dictionaries do not list the pair."""

from __future__ import annotations

from .cedict import _cedict
from .wordnet import _POS, _bases


_ACRONYM_SKIPPED = frozenset({"and", "of", "the", "&", "for"})


def _shortened(left: tuple[str, ...], right: tuple[str, ...]) -> str | None:
    """Why one stretch is a short form of the other, or None:
    - an acronym: one word of two to five letters spelling the initials of the other's words (HR /
      human resources, DM / direct message; "and", "of", "the" may be skipped: R&D);
    - a clipping: word by word, each either equal or a beginning of the other that WordNet does not
      know as a word of its own (app / application, sci fi / science fiction). A clipping WordNet
      knows is a word of its own: car / carpet, pen / penguin."""
    for short, long in ((left, right), (right, left)):
        if len(short) == 1 and 2 <= len(long) <= 5 and short[0].isalpha() and 2 <= len(short[0]) <= 5:
            initials = "".join(w[0] for w in long if w)
            kept = "".join(w[0] for w in long if w and w not in _ACRONYM_SKIPPED)
            if short[0] in (initials, kept) and all(w.isalpha() for w in long):
                return f"acronym {short[0]}/{' '.join(long)}"
    if len(left) != len(right) or left == right:
        return None
    clipped = []
    for x, y in zip(left, right):
        if x == y:
            continue
        short, long = (x, y) if len(x) < len(y) else (y, x)
        if short.endswith("s") and long.endswith("s") and len(short) > 3:
            short, long = short[:-1], long[:-1]           # carbs / carbohydrates: both plural
        if not (short.isalpha() and long.isalpha() and long.startswith(short) and len(short) >= (2 if len(left) > 1 else 3)):
            return None
        if any(_bases(short, pos) for pos in _POS) or not any(_bases(long, pos) for pos in _POS):
            return None
        clipped.append(f"{short}/{long}")
    return f"clipping {' '.join(clipped)}" if clipped else None


def _abbreviation(long_words: tuple[str, ...], short_words: tuple[str, ...]) -> str | None:
    """Why the short stretch is the usual abbreviation of the long one, or None: a Chinese name of
    words of two or more characters shortened to one character of each, in order, mostly the
    first (社会保险 -> 社保, 网上购物 -> 网购, 南京大学 -> 南大, 世界博览会 -> 世博会), sometimes
    another (汽车保险 -> 车险: 车 of 汽车, 险 of 保险). The
    parts are jieba's words of the long stretch, or (one word of four or six characters) its
    two-character halves when CC-CEDICT lists each (南京 + 大学, 亚洲 + 运动 + 会); a last part of
    one character stays whole (会). Never a word inside the long form (手机壳 -> 手机 is another
    thing)."""
    long, short = "".join(long_words), "".join(short_words)
    if not (4 <= len(long) <= 6 and 2 <= len(short) <= 3) or short in long:
        return None
    if not all("\u3400" <= c <= "\u9fff" for c in long + short):
        return None
    table = _cedict() or {}
    halves = [long[i:i + 2] for i in range(0, len(long), 2)]
    readings = [[w for w in long_words if w]]
    if all(part in table for part in halves if len(part) == 2):
        readings.append(halves)
    for parts in readings:
        if len(parts) != len(short) or any(len(part) < 2 for part in parts[:-1]):
            continue
        if all(c in part for c, part in zip(short, parts)):
            return f"abbreviation {short}/{long}"
    return None
