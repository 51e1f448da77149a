"""**Extraction** in Chinese (seed 002 "实体记忆"), with no LLM: jieba segments and its
part-of-speech tags name the kind (``nr`` person, ``ns`` place, ``nt`` organisation, ``nz`` other
proper noun); a new word jieba's HMM finds that starts with a common surname is a person, a surname
before a title (``张经理``) is a person, and a name before a company word (``华信`` + ``科技``) is an
organisation. The lake's user dictionary (``[entities] user_dict``, entries ``"word tag"``) adds
words with their tags. jieba's part-of-speech HMM costs ~10x its segmentation, so segmentation runs
with the plain HMM and tags come from the dictionary (``benchmarks/entities.py`` measures it).
"""

from __future__ import annotations

import functools

from ...store import InputError
from ...text import COMPOUND_SURNAMES as _COMPOUND_SURNAMES, SURNAMES as _SURNAMES
from ...text import cedict_name, common_word, is_chinese_word
from .rows import CONFIDENCE, _HAN

_TAG_KINDS = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "organisation",
              "nz": "thing"}
_TITLES_ZH = frozenset("经理 总监 总 老师 主任 先生 女士 小姐 医生 教授 老板 工 律师 科长 处长 部长 局长 院长 校长 "
                       "主管 组长 书记 董事长 总裁 博士 师傅 阿姨 叔叔".split())
_ORG_WORDS_ZH = frozenset("公司 集团 科技 银行 大学 学院 医院 物流 研究院 研究所 工作室 事务所 中心 有限公司 股份 "
                          "基金会 协会 实验室".split())


@functools.lru_cache(maxsize=4)
def _chinese_tokenizer(user_dict: tuple[str, ...]):
    """A private jieba tokenizer (search's global one is left alone) with the user dictionary:
    (tokenizer, tags of known words, tags of user words, its part-of-speech tokenizer)."""
    from ...text import jieba_segmenter

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
