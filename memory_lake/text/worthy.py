"""Which chat messages are worth remembering, and how much (issue 41.3; seed 002's ``addMessage`` ->
``isMemoryWorthy`` / ``scoreImportance``).

``judge(text, role)`` reads one message with rules written as data below (phrase lists and regular expressions,
English and Chinese), no model, pure Python (``benchmarks/transcript_rules.py`` prints its messages a second).
It returns a ``Judgement``: ``worthy``, ``kind``, ``importance`` (0..1, None when not worthy) and ``reason``,
the rule that decided (``en.preference.strong``, ``zh.commitment.plan+date``, ``zh.question`` ...).

Language is told by script: Han characters are read with the Chinese rules, Latin words with the English ones,
a mixed message with both (hits pooled; the script with more text, a Han character weighing three Latin letters,
names the language of a non-worthy kind). No letter (emoji, digits) is ``chitchat``, an empty text ``other``.
Only the first ``MAX_CHARS`` characters are read.

Worth remembering: a *hit* of ``EN_RULES`` / ``ZH_RULES``, the user speaking of themselves or their people
(I / we / my / 我 / 我们, or a Chinese clause without a subject):
    ``preference``  likes, loves, dislikes, hates, favourites, hobbies, diets, "I'd rather" (我喜欢, 讨厌,
                    受不了, 对…感兴趣, 吃素); "I love it / you / that", 我爱你 are reactions.
    ``fact``        name, age, birthday, job, studies, home, family and pets, other people ("my sister works
                    at …", 我妈妈…), health, allergies, skills, what they learn or read, habits (I usually,
                    我每天), personality, a state lasting "lately" (stressed, 失眠, 压力大), contact details.
    ``decision``    decided / chose / made up my mind / from now on / switched to / quit (我决定, 定了, 就选,
                    从今天开始我, 戒烟, 我再也不).
    ``commitment``  plans with something to do ("I will / am going to / plan to / have to …", 我打算, 我准备,
                    我要; not "I'll try it", "I'm going to bed", 我会的, 我去睡了, nor a Chinese clause telling
                    what was done), appointments ("I have an interview on Friday", 我下周三考试), "remind me
                    to …" (提醒我), promises, goals; a wish ("I want to", "I'm thinking of", 我想去, 我在考虑)
                    is a weak one; a progressive verb ("I'm flying to Tokyo") counts only with a date.
    ``event``       what happened that matters (married, engaged, broke up, moved, new or lost job, graduated,
                    a baby, an illness, a death: 结婚, 分手, 毕业, 升职, 住院, 去世) and, weakly, an outing with
                    a date or "just" ("we went hiking yesterday", 我昨天去了长城), not meals or chores.
A hit in a clause that asks ("Should I quit my job?", 我该辞职吗) or supposes ("if I decide", "I wonder if",
如果…的话) does not count, except a request to be reminded ("Can you remind me to call mom tomorrow?"). An
explicit "remember that / just so you know / 记住 / 帮我记" is worthy on its own.

Not worth it, the kind says why: ``pleasantry`` (greetings, thanks, goodbyes, bare acknowledgements, "how are
you", 好的, 收到, 晚安: every clause one, reactions allowed), ``question`` (a question or request without a
hit: "Can you recommend a book?", 帮我写一首诗), ``chitchat`` (reactions, small talk, "I'm bored", 哈哈,
今天天气不错, emoji, any message of at most ``SHORT_EN_WORDS`` words / ``SHORT_ZH_CHARS`` Han characters
without a hit), ``other`` (longer messages without a hit: opinions, stories of the day, pasted text).

Roles: ``user`` / ``human`` as above; ``assistant`` / ``ai`` / ``bot`` / ``model`` only when the assistant commits
to something concrete for the user ("I'll remind you …", "I've booked …", 我会提醒你, 已经帮你预约了:
``ASSISTANT_EN`` / ``ASSISTANT_ZH``), a ``commitment`` of 0.6 (0.8 with a date); any other role never.

Importance (seed 002 consolidates ``importance > 0.7`` to long-term memory):
    0.85-0.95  name, birthday, health; strong preferences (love, hate, favourite); plans and appointments
               with a date; major life events.
    0.75-0.8   decisions, job, home, family, diet; reminders asked for.
    0.55-0.7   ordinary preferences, other people, undated plans, skills, habits, personality; an explicit
               "remember" alone (0.7); a plan for today only (``TODAY_IMPORTANCE``).
    0.4-0.5    wishes, lasting states, outings.
A rule gives the base (``Rule.importance``; ``Rule.dated`` when its clause names a date or time: tomorrow,
next week, on Friday, May 5, 3pm, 明天, 下周三, 5月3号, 下午三点 …). Then a hedge in the clause (maybe, kind
of, I think, 可能, 也许, 我觉得) -0.1; an intensifier on a preference (really, so much, 最, 特别, 超) +0.1; an
explicit "remember" +0.1 (at least 0.7); clamped to 0.1..0.95. Of several hits the most important gives the
kind (ties: decision, commitment, event, fact, preference).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache

KINDS = ("preference", "decision", "fact", "commitment", "event", "pleasantry", "question", "chitchat", "other")
MEMORY_KINDS = ("preference", "decision", "fact", "commitment", "event")
MAX_CHARS = 2000  # only the start of a very long message (a pasted document) is read
TODAY_IMPORTANCE = 0.7  # a dated rule's importance when its only date is today / tonight
REMEMBER_IMPORTANCE = 0.7  # an explicit "remember that ..." with no other hit
HEDGE_PENALTY, INTENSIFIER_BONUS, REMEMBER_BONUS = 0.1, 0.1, 0.1
_TIE_ORDER = {"decision": 0, "commitment": 1, "event": 2, "fact": 3, "preference": 4}
SHORT_EN_WORDS, SHORT_ZH_CHARS = 3, 6  # a message without a hit this short is chitchat, longer is other


@dataclass(frozen=True)
class Judgement:
    """What ``judge`` made of a message."""

    worthy: bool
    kind: str  # one of KINDS
    importance: float | None  # 0..1 when worthy, else None
    reason: str  # the rule that decided


@dataclass(frozen=True)
class Rule:
    """One hit pattern. ``importance`` None: the rule fires only when its clause names a date.
    ``dated``: the importance when it does (None: dates change nothing). ``rest``: the words after
    the match must say something (``EN_TRIVIAL`` / ``ZH_TRIVIAL`` decide; a date always does).
    ``ask_ok``: fires in a question too (a request to remember or to be reminded)."""

    name: str
    kind: str
    importance: float | None
    pattern: str
    dated: float | None = None
    rest: bool = False
    ask_ok: bool = False


# A clause starts a message or follows punctuation (and at most one space): rules anchored there
# start where their first word does, as ``EN_STARTS`` / ``ZH_STARTS`` expect.
_CLAUSE = r"(?:^|(?<=[,.!?;:\n。、…~])|(?<=[,.!?;:\n。、…~] ))"

# ============================================================================ English
# Text is NFKC-normalised, lower-cased and its contractions expanded (``EN_CONTRACTIONS``) first.
EN_CONTRACTIONS = dict(pair.split("=") for pair in (
    "i'm=i am|im=i am|i've=i have|ive=i have|i'll=i will|i'd=i would|we're=we are|we've=we have|we'll=we will|"
    "we'd=we would|you're=you are|don't=do not|dont=do not|doesn't=does not|didn't=did not|can't=cannot|"
    "cant=cannot|won't=will not|isn't=is not|aren't=are not|wasn't=was not|haven't=have not|it's=it is|"
    "that's=that is|what's=what is|how's=how is|gonna=going to|wanna=want to|gotta=got to|i'ma=i am going to|"
    "name's=name is").split("|"))
_ADV = (r"(?:(?:really|truly|absolutely|totally|just|also|still|actually|definitely|kind of|kinda|sort of|"
        r"pretty much|generally|mostly|honestly|do|personally|so|especially|particularly|deeply|genuinely|"
        r"secretly|always|now|too|both)\s+)*")
_WE = r"\b(?:i|we)\s+"
_NOT_REACTION = (r"(?!(?:you|it|that|this|them|those|these|your|ur|u|how you|what you|the way you|talking|"
                 r"chatting|the idea|the suggestion|the advice|the plan|that idea|this idea|our (?:chats?|conversations?|"
                 r"talks?))\b)")
_PEOPLE = (r"(?:wife|husband|partner|girlfriend|boyfriend|fianc[eé]e?|son|daughter|kids?|children|child|baby|"
           r"mom|mum|mother|dad|father|parents|brother|sister|siblings?|twin|grandma|grandmother|grandpa|"
           r"grandfather|grandparents|aunt|uncle|cousin|niece|nephew|friend|best friend|boss|manager|colleague|"
           r"coworker|co-worker|roommate|neighbou?r|teacher|dog|cat|puppy|kitten|pet|in-laws?|family|team)")
_JOBS = (r"(?:teacher|engineer|developer|programmer|coder|doctor|nurse|student|lawyer|designer|manager|writer|"
         r"author|artist|musician|accountant|chef|cook|scientist|researcher|professor|consultant|architect|"
         r"freelancer|farmer|driver|pilot|officer|analyst|salesman|saleswoman|salesperson|entrepreneur|"
         r"photographer|journalist|editor|retiree|housewife|homemaker|stay-at-home \w+|intern|graduate|"
         r"undergrad(?:uate)?|phd student|postdoc|veteran|pharmacist|dentist|therapist|psychologist|mechanic|"
         r"electrician|plumber|carpenter|barista|waiter|waitress|cashier|clerk|lecturer|tutor|coach|athlete|"
         r"streamer|youtuber|blogger|founder|ceo|cto|owner|employee|worker|volunteer|freshman|sophomore|"
         r"junior|senior|single (?:mom|mother|dad|father)|mom|mother|dad|father|parent|grandmother|grandfather)")
_AILMENTS = (r"(?:allerg(?:y|ies)|diabetes|asthma|adhd|autism|depression|anxiety|insomnia|migraines?|cancer|"
             r"high blood pressure|hypertension|celiac|arthritis|a bad back|back pain|a heart condition|"
             r"epilepsy|eczema|ibs|ocd|ptsd|a disability|dyslexia)")
_EVENTS_SELF = (
    r"(?:got|getting|have gotten)\s+(?:married|engaged|divorced|promoted|fired|laid off|hired|a new job|a job|"
    r"accepted|admitted|into|a raise|a scholarship|pregnant|my degree|my (?:driver'?s )?licen[cs]e|the job|"
    r"the offer|an offer|a promotion|a puppy|a kitten|a dog|a cat)"
    r"|graduated|retired|relocated|broke up|split up|moved (?:to|into|out|house|abroad|back)"
    r"|passed (?:my|the|all)|failed (?:my|the)|won (?:a|an|the|first|second|third)"
    r"|lost (?:my|our) (?:job|mom|mum|mother|dad|father|grandma|grandmother|grandpa|grandfather|wife|husband|"
    r"dog|cat|pet|brother|sister|friend|wallet|phone|passport|baby)"
    r"|quit (?:my|the) (?:job|company)|started (?:a new|my new|working|school|college|university|grad school|"
    r"a business|my own)|finished (?:my|the) (?:degree|thesis|dissertation|exams?|marathon|studies)"
    r"|bought (?:a|our|my|the) (?:house|home|car|apartment|flat)|had (?:a baby|surgery|an operation|an accident|"
    r"a car accident|a miscarriage|twins)|gave birth|adopted|became (?:a|an)\s+\w+"
    r"|was (?:diagnosed|promoted|fired|laid off|hired|accepted|admitted|injured|hospitali[sz]ed|robbed)"
    r"|am (?:pregnant|engaged|expecting)|are (?:pregnant|engaged|expecting)|turned \d+")
_EVENTS_OTHER = (r"(?:passed away|died|was born|were born|got (?:married|sick|engaged|divorced|promoted|hurt|"
                 r"injured|fired)|is (?:sick|ill|in (?:the )?hospital|pregnant|getting married|expecting)|"
                 r"had (?:a baby|surgery|an accident|a stroke|a heart attack)|was (?:diagnosed|hospitali[sz]ed))")
_APPOINTMENTS = (r"(?:meeting|appointment|interview|exam|test|final|finals|deadline|flight|trip|date|presentation|"
                 r"party|wedding|surgery|operation|class|lesson|recital|concert|game|match|conference|checkup|"
                 r"check-up|call|shift|reservation|vacation|holiday|race|marathon|competition|audition|"
                 r"ceremony|graduation|dinner|lunch)")
_PLAN_FIRM = (r"(?:will|shall|am going to|are going to|plan to|am planning to|are planning to|planned to|"
              r"intend to|am about to|have to|need to|must|promise to|promised to|am supposed to|have got to|"
              r"got to|am scheduled to|are scheduled to|am due to|am determined to|am committed to|"
              r"am trying to|am saving (?:up )?for|am preparing for|am training for)")
_PLAN_WISH = (r"(?:want to|would like to|would love to|hope to|am hoping to|am thinking of|am thinking about|"
              r"have been thinking (?:of|about)|have been meaning to|"
              r"am considering|should|wish i could|dream of|might)")
_LEARN = (r"(?:speak|can speak|am fluent in|am learning|have been learning|started learning|began learning|"
          r"am studying|have been studying|am taking (?:a |an )?(?:class|course|lessons?)|play the|can play|"
          r"know how to|am good at|am bad at|am reading|am writing|am working on|am building|have been (?!feeling|thinking|wondering|trying|meaning|waiting|dying)\w+ing)")
_STATES = (r"(?:stressed|depressed|anxious|lonely|overwhelmed|burn(?:ed|t) out|struggling|sick|ill|unwell|exhausted|"
           r"sad|down|heartbroken|worried|nervous|not sleeping|unable to sleep|having trouble sleeping)")

EN_RULES: tuple[Rule, ...] = (
    # identity and health first: they are the most important
    Rule("en.fact.name", "fact", 0.9, r"\bmy name is\b|\bcall me\s+[a-z]|\bi am called\b|\bname is [a-z]+,? by the way"
         rf"|{_CLAUSE}(?:hi|hello|hey)(?: there| everyone)?[,.!\s]+(?:this is|i am) (?!back|here|fine|good|ok|okay|new|"
         r"tired|bored|sad|happy|so|very|just|not|still|well|great)[a-z]+(?=\s*[,.!]|$)"),
    Rule("en.fact.birthday", "fact", 0.9,
         r"\b(?:my|his|her|their|our)\s+(?:[\w'-]+\s+){0,2}birthday\s+(?:is|was|falls)\b|\bi was born\b"
         r"|\bit is (?:my|his|her|our|their)\s+(?:[\w'-]+\s+){0,2}birthday\b"),
    Rule("en.fact.health", "fact", 0.9,
         rf"\bi am allergic to\b|\bi (?:have|suffer from|have been diagnosed with|was diagnosed with)\s+"
         rf"(?:a |an |severe |mild |chronic )?{_AILMENTS}|\bi am (?:lactose intolerant|diabetic|asthmatic|"
         rf"colou?r ?blind|deaf|blind|pregnant|gluten intolerant)\b"),
    Rule("en.fact.age", "fact", 0.85, r"\bi am\s+\d{1,3}\s*(?:years? old|yo\b|y/o)|\bi am\s+\d{1,2}(?=\s*(?:[,.!]|$|and\b|now\b))"),
    Rule("en.fact.contact", "fact", 0.85,
         r"\bmy\s+(?:email|e-mail|phone|phone number|cell|mobile|number|address|home address|wechat|whatsapp)\s+(?:is|:)"),
    Rule("en.fact.home", "fact", 0.8,
         r"\bi\s+(?:live|am living|grew up|was raised|am based|am staying|have lived)\s+(?:in|at|near|on|outside)\b"
         r"|\bi am (?:originally )?from\b|\bi come from\b|\bmy (?:hometown|home town) is\b"),
    Rule("en.fact.job", "fact", 0.8,
         rf"\bi\s+(?:work|am working|have worked|have been working)\s+(?:as|at|for|in|from home|remotely|part-time|full-time|"
         rf"night shifts?|shifts|freelance)\b|\bi am\s+(?:a|an)\s+"
         rf"(?:[\w-]+\s+){{0,2}}{_JOBS}\b|\bi am (?:retired|unemployed|self-employed|between jobs|a stay-at-home)\b"
         r"|\bmy (?:job|profession|occupation|major|field) is\b|\bi (?:major|majored) in\b|\bi am majoring in\b"
         r"|\bi (?:studied|study) (?:at|in)\b|\bi graduated from\b|\bi teach\b"),
    Rule("en.fact.family", "fact", 0.8,
         rf"\b(?:i|we) have\s+(?:a|an|one|two|three|four|five|six|\d+|twin)\s+(?:[\w-]+\s+){{0,2}}"
         r"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|wife|husband|girlfriend|boyfriend|"
         r"partner|fianc[eé]e?|dogs?|cats?|puppy|puppies|kittens?|pets?|parrots?|hamsters?|rabbits?|babies|baby|"
         r"grandchildren|grandkids|twins|roommates?)\b|\bi am (?:married|single|divorced|engaged|widowed)\b"),
    Rule("en.preference.diet", "preference", 0.8,
         r"\bi am (?:a )?(?:vegetarian|vegan|pescatarian|teetotal|teetotaler|keto|on a diet)\b"
         r"|\bi (?:do not|never|cannot) (?:eat|drink) (?:meat|pork|beef|fish|seafood|dairy|eggs|gluten|alcohol|"
         r"sugar|spicy food|coffee)\b"),
    # events
    Rule("en.event.life", "event", 0.8, rf"{_WE}(?:(?:just|finally|recently|have|had|officially|also)\s+)*(?:{_EVENTS_SELF})\b"),
    Rule("en.event.people", "event", 0.85,
         rf"\bmy\s+(?:[\w-]+\s+)?{_PEOPLE}\s+(?:(?:just|recently|has|have|finally)\s+)*(?:{_EVENTS_OTHER})\b"),
    # decisions
    Rule("en.decision.decided", "decision", 0.8,
         rf"{_WE}(?:(?:have|had|just|finally|already|now|officially|also)\s+)*(?:decided|chose|chosen|picked|opted|"
         r"settled on|made up my mind|made the decision|made a decision|made my decision|committed to)\b"),
    Rule("en.decision.from_now_on", "decision", 0.8, r"\bfrom now on\b|\bstarting (?:today|tomorrow|now),? i\b"),
    Rule("en.decision.switch", "decision", 0.75,
         rf"{_WE}(?:(?:am|are|will|have)\s+)?(?:going with|go with|switching to|switched to|quitting|quit|"
         r"giving up|gave up|given up|stopped|am stopping)\s+(?!it\b|that\b|this\b)\w"
         r"|\bi (?:will|am going to) (?:no longer|never again)\b|\bi am done with\b|\blet us go with\b"),
    # commitments
    Rule("en.commitment.remind", "commitment", 0.75,
         r"\bremind me\b|\b(?:do not|never) let me forget\b|\bset (?:a|an|me a) (?:reminder|alarm)\b",
         dated=0.9, ask_ok=True),
    Rule("en.commitment.promise", "commitment", 0.75, r"\bi (?:promised|have promised|swore)\b"),
    Rule("en.commitment.appointment", "commitment", 0.6,
         rf"{_WE}(?:(?:also|still|already)\s+)?(?:have|have got|got|am having|are having)\s+(?:a|an|my|the|our|another|"
         rf"two|\d+|big|important)\s+(?:[\w'-]+\s+){{0,2}}{_APPOINTMENTS}\b"
         rf"|\bmy\s+(?:[\w'-]+\s+)?{_APPOINTMENTS}\s+(?:is|starts|was moved|got moved|has been moved|got postponed)\b",
         dated=0.85),
    Rule("en.commitment.goal", "commitment", 0.7,
         r"\bmy (?:goal|dream|plan|resolution|new year'?s resolution|aim|target) (?:is|this year is|for \w+ is)\b"),
    Rule("en.commitment.plan", "commitment", 0.6, rf"{_WE}(?:(?:really|definitely|also|still|finally|just)\s+)*{_PLAN_FIRM}\s+",
         dated=0.85, rest=True),
    Rule("en.commitment.wish", "commitment", 0.5, rf"{_WE}(?:(?:really|also|still|just|kind of|always)\s+)*{_PLAN_WISH}\s+",
         dated=0.75, rest=True),
    Rule("en.commitment.dated", "commitment", None,
         rf"{_WE}(?:am|are)\s+(?:flying|going|heading|leaving|travell?ing|moving|meeting|visiting|starting|having|hosting|"
         r"attending|driving|coming|returning|graduating|celebrating|throwing|presenting|interviewing|taking|seeing|"
         r"picking up|competing|performing|volunteering|working|getting|doing|playing|running|flying out|staying)\b"
         rf"|{_CLAUSE}(?:going to|heading to|flying to|off to|leaving for|moving to|starting)\b"
         rf"|\bmy\s+(?:[\w'-]+\s+)?{_APPOINTMENTS}\b", dated=0.85),
    # preferences
    Rule("en.preference.favourite", "preference", 0.8,
         r"\bmy\s+(?:absolute\s+|all-time\s+|personal\s+)?fav(?:ou?rite)?s?\b(?:\s+[\w-]+){0,3}\s+(?:is|are|has to be|would be|was)\b"
         r"|\bmy (?:hobby|hobbies|passion|interests?) (?:is|are|include|includes)\b"),
    Rule("en.preference.strong", "preference", 0.8,
         rf"{_WE}{_ADV}(?:love|adore|hate|detest|loathe|cannot stand|cannot live without|am (?:crazy|obsessed|passionate)"
         rf" about|am obsessed with|am addicted to)\s+{_NOT_REACTION}\w"
         rf"|{_CLAUSE}(?:really\s+)?(?:love|hate|adore)\s+{_NOT_REACTION}\w"),
    Rule("en.preference.like", "preference", 0.7,
         rf"{_WE}{_ADV}(?:like|enjoy|prefer|dislike|(?:do not|never) (?:really\s+)?(?:like|enjoy|eat|drink)|"
         rf"am (?:a (?:big |huge |real )?fan of|into|fond of|keen on|partial to)|"
         rf"am not (?:really |much |very |a big |a huge )*(?:into|a fan of|fond of|keen on)|"
         rf"would rather|tend to prefer|am more of a|have a soft spot for|have a thing for)\s+{_NOT_REACTION}\w"
         r"|\bi am (?:more )?(?:a (?:cat|dog|morning|night|coffee|tea|beach|mountain) person)\b"
),
    # weaker facts
    Rule("en.fact.people", "fact", 0.7,
         rf"\bmy\s+(?:little\s+|older\s+|younger\s+|big\s+|elder\s+|best\s+|ex-?\s*|late\s+|new\s+)?{_PEOPLE}"
         r"(?:'s|\s+(?:\w+\s+)?(?:is|was|are|were|has|had|works|worked|lives|lived|likes|loves|hates|got|will|"
         r"name|birthday|turns|turned|wants|studies|goes|plays|does|cannot|never|always|just|recently))\b"),
    Rule("en.fact.personality", "fact", 0.6,
         r"\bi am (?:(?:very|quite|pretty|really|a bit|kind of|an?)\s+)*(?:introvert(?:ed)?|extrovert(?:ed)?|shy|night owl|"
         r"early bird|perfectionist|homebody|foodie|workaholic|morning person|night person|introverted|extroverted|"
         r"people person|loner|optimist|pessimist|optimistic|pessimistic)\b"),
    Rule("en.fact.skill", "fact", 0.6,
         rf"\bi\s+(?:also\s+|still\s+|recently\s+)?{_LEARN}\s+\w|\bi (?:also )?play\s+(?:the\s+)?(?:guitar|piano|"
         r"violin|drums|bass|cello|flute|basketball|football|soccer|tennis|badminton|volleyball|golf|chess|baseball|"
         r"hockey|video games|games)\b|\bi (?:own|drive|ride)\s+(?:a|an)\s+\w"),
    Rule("en.fact.habit", "fact", 0.55,
         r"\b(?:i|we)\s+(?:usually|normally|often|regularly|always|never|rarely|typically|sometimes)\s+(?!do not\b|"
         r"forget|say|think|feel|know|get\b)\w+"
         r"|\bi\b[^.,!?;\n]{0,40}\bevery\s+(?:day|morning|evening|night|week|weekend|month|year|monday|tuesday|"
         r"wednesday|thursday|friday|saturday|sunday)\b|\bi used to\b"),
    Rule("en.fact.state", "fact", 0.5,
         rf"\bi\s+(?:have been|am|have|was)\s+(?:feeling\s+|been\s+)?(?:so\s+|really\s+|very\s+|a bit\s+|quite\s+|"
         rf"pretty\s+|super\s+)?{_STATES}\b(?=[^.!?\n]{{0,50}}\b(?:lately|recently|these days|for (?:weeks|months|"
         r"days|a while|a long time)|all week|this week|since))"
         rf"|\b(?:lately|recently|these days),?\s+i\s+(?:have been|am|feel)\s+(?:feeling\s+)?(?:so\s+|really\s+|very\s+)?"
         rf"{_STATES}\b"),
    Rule("en.event.outing", "event", 0.4,
         rf"{_WE}(?:(?:just|finally|also|recently)\s+)?(?:went|visited|traveled|travelled|watched|saw|read|attended|met|"
         r"joined|tried|cooked|baked|climbed|hiked|ran|played|bought|learned|learnt|wrote|painted|finished|"
         r"started)\s+(?!(?:lunch|dinner|breakfast|a nap|to bed|to sleep|home|to work|to school|to the bathroom|"
         r"it|that|this)\b)[^.!?\n]{0,60}\b(?:today|yesterday|last (?:night|week|weekend|month|year|monday|tuesday|"
         r"wednesday|thursday|friday|saturday|sunday)|this (?:morning|afternoon|weekend|week)|over the weekend|"
         r"\d+ (?:days|weeks) ago|the other day)\b"
         rf"|{_WE}just\s+(?:got back from|went to|visited|watched|saw|read|finished|attended|climbed|hiked|ran|tried|"
         r"started|joined|met)\s+(?!(?:lunch|dinner|breakfast|a nap|to bed|to sleep|home|to work|to school|to the bathroom|"
         r"it|that|this|eating|my (?:lunch|dinner|breakfast|homework))\b)\w"),
)
# an explicit request to remember (the message is worthy on its own)
EN_REMEMBER = re.compile(
    r"(?:^|(?<=[,.!?;:\n]))\s*(?:(?:please|pls|also|and|so|oh|btw|hey)\s+)*(?:(?:can|could|would|will) you\s+(?:please\s+)?)?"
    r"(?:remember|note|keep in mind|do not forget|never forget|make a note|take note|save this|write (?:this|that) down)\b"
    r"|\bfor the record\b|\bjust so you know\b|\bfyi\b|\bfor future reference\b|\bi want you to (?:know|remember)\b")
EN_HEDGE = re.compile(r"\b(?:maybe|perhaps|kind of|kinda|sort of|probably|might|i guess|i think|not sure|possibly|"
                      r"a bit|a little|somewhat)\b")
EN_INTENSE = re.compile(r"(?<!not )\b(?:really|absolutely|so much|a lot|totally|definitely|truly|deeply|madly|passionately|"
                        r"more than anything|the most)\b")
_MONTHS = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|"
           r"apr|jun|jul|aug|sep|sept|oct|nov|dec)")
_DAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
EN_DATE = re.compile(
    rf"\b(?:tomorrow|day after tomorrow|next (?:week|month|year|weekend|{_DAYS}|spring|summer|fall|autumn|winter|semester)"
    rf"|this (?:coming )?(?:week|weekend|month|year|{_DAYS}|spring|summer|fall|autumn|winter|friday)|on {_DAYS}|{_DAYS}s?\b"
    rf"|{_MONTHS}\.? \d{{1,2}}(?:st|nd|rd|th)?|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_MONTHS}|in {_MONTHS}"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|at \d{1,2}(?::\d{2})?\s*(?:am|pm|o'?clock)?|\d{1,2}(?::\d{2})?\s*(?:am|pm)"
    r"|in (?:a|one|two|three|four|five|a few|\d+) (?:days?|weeks?|months?|years?)|by (?:the end of|friday|monday|next)"
    r"|end of (?:the )?(?:week|month|year)|this (?:morning|afternoon|evening)|noon|midnight|in 20\d\d|soon)\b")
EN_TODAY = re.compile(r"\b(?:today|tonight|this evening|later today|later tonight)\b")
# what a plan's words must not be, alone, to count ("I'll try it", "I have to go", "I need to know")
EN_TRIVIAL = re.compile(
    r"(?:(?:definitely|probably|just|also|maybe|totally|surely|really|certainly|have to|try to|to)\s+)*"
    r"(?:try|give it a (?:try|shot|go)|think|keep (?:that|it|this) in mind|check (?:it|that|them|this) out|look into|"
    r"consider|see|let you know|do (?:that|it|so|my best|this)|be (?:fine|ok|okay|back|right back|careful|there)|"
    r"go(?: to bed| to sleep| now| home| for now| out for a bit| offline)?|sleep|rest|take a (?:nap|break|rest|shower)|"
    r"head out|leave|get going|talk|chat|ask|tell you|say|remember (?:that|it|this)|miss you|love it|work on it|"
    r"figure (?:it|that) out|pass|keep trying|know|understand|find out|learn more|admit|agree|stop|eat|get some sleep|"
    r"get some rest|bed|wait|hang in there|calm down|relax|cry|vent|sigh|laugh|survive|manage|cope)\b")
_EN_INFO = re.compile(r"(?:(?:just|really|also)\s+)*(?:to\s+)?(?:know|ask|understand|find out|figure out|learn more about|"
                      r"hear|talk|chat|vent)\b")
EN_STOP = frozenset("it that this them the a an to and so too now then you your me my be do some more again for of with on "
                    "in out up about just really very definitely probably maybe soon later right back well all go get "
                    "will would can could should i we our us is am are was were".split())

ASSISTANT_EN = re.compile(
    r"\bi\s+(?:will|am going to|shall)\s+(?:(?:also|definitely|be sure to|make sure to|now|then|go ahead and)\s+)*"
    r"(?:remind you|send you|email you|text you|call you|book|schedule|set (?:up )?(?:a|an|the|your) (?:reminder|alarm|"
    r"timer|meeting|appointment)|follow up|check (?:back|in) (?:with you|on you)|get back to you|add (?:it|this|that|the|"
    r"\w+) to your|put (?:it|this|that) (?:on|in) your|order|reserve|cancel your|notify you|ping you|prepare (?:a|the|"
    r"your))\b|\bi (?:have|just|already)\s+(?:(?:just|already)\s+)?(?:set|scheduled|booked|added|created|saved|reserved|"
    r"ordered|sent)\s+(?:a|an|the|your|it|you)\b|\breminder (?:is )?set\b")

# ============================================================================ Chinese
_Z_TIME = (r"(?:今天|今晚|明天|明早|明晚|后天|大后天|下周[一二三四五六日天]?|下星期[一二三四五六日天]?|下个?礼拜[一二三四五六日天]?|"
           r"下个?月|下半年|明年|今年|本周[一二三四五六日天]?|这周[一二三四五六日天末]?|这个周末|周末|月底|年底|过几天|过两天|"
           r"周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|\d+月份?(?:\d+[日号])?|[一二三四五六七八九十]+月份?"
           r"(?:[一二三四五六七八九十]+[日号])?|(?:这个|今年|明年)?(?:夏天|冬天|春天|秋天)|\d+[日号]|[一二三四五六七八九十]+号|上午|下午|晚上|早上|中午|"
           r"\d+点(?:半|\d+分?)?|[一两二三四五六七八九十]+点(?:半)?|寒假|暑假|春节|国庆|下学期|开学)")
_Z_ADV = r"(?:也|都|还|就|真的?|其实|一直|特别|非常|很|挺|超级?|最|比较|蛮|有点|更|确实|本来|向来|从小就?|平时|一向|总是|还是|好|太|真心)"
_Z_NOT_REACTION = r"(?!你|您|它|这个|那个|这样|这种感觉|和你|跟你|与你|同你|你们|您们|上你)"
_Z_PEOPLE = (r"(?:妈妈|妈|爸爸|爸|父亲|母亲|父母|爸妈|老婆|老公|妻子|丈夫|爱人|儿子|女儿|孩子|宝宝|哥哥|哥|姐姐|姐|弟弟|妹妹|奶奶|"
             r"爷爷|外婆|外公|姥姥|姥爷|男朋友|女朋友|男友|女友|对象|未婚妻|未婚夫|朋友|好朋友|闺蜜|兄弟|同事|老板|领导|上司|室友|邻居|老师|同学|家人|狗|猫|小狗|小猫|狗狗|猫咪|宠物)")
_Z_JOBS = (r"(?:老师|教师|学生|大学生|研究生|博士生?|硕士生?|本科生|工程师|程序员|医生|护士|律师|设计师|经理|作家|画家|音乐人|"
           r"会计|厨师|科学家|研究员|教授|顾问|建筑师|自由职业者?|农民|司机|飞行员|警察|分析师|销售|企业家|摄影师|记者|编辑|"
           r"宝妈|全职妈妈|家庭主妇|实习生|公务员|主播|博主|网红|产品经理|运营|职员|白领|员工|店主|创业者|服务员|快递员|"
           r"外卖员|保安|演员|歌手|运动员|军人|高中生|初中生|小学生|退休|上班族|打工人|码农|留学生|新手妈妈|单亲妈妈)")
_Z_START = _CLAUSE

ZH_RULES: tuple[Rule, ...] = (
    Rule("zh.fact.name", "fact", 0.9, rf"(?:你好|您好|嗨|哈喽|大家好)[,.!。\s]*我是[^\s,.!?。的个一了吗呢吧啊]{{1,4}}(?=$|[,.!?。])|我叫(?!你|您|他|她)|我的名字(?:是|叫)|我名字叫|{_CLAUSE}叫我[^\s,.!?。]|我姓[^\s,.!?。的]"),
    Rule("zh.fact.birthday", "fact", 0.9,
         r"(?:我|他|她|我们)[^\s,.!?。]{0,4}的?生日(?:是|在|就?是|快到了)|是(?:我|他|她)[^\s,.!?。]{0,4}的生日|我(?:是|出生于|出生在)[^\s,.!?。]{0,10}(?:年|月|日|号)?出生|我出生在|我出生于"),
    Rule("zh.fact.health", "fact", 0.9,
         r"我对[^\s,.!?。]{1,10}过敏|我(?:有|患有|得了|查出|查出了|被诊断出?|被确诊)[^\s,.!?。]{0,6}(?:过敏|糖尿病|高血压|哮喘|"
         r"抑郁症|焦虑症|失眠症?|胃病|心脏病|癌|颈椎病|腰椎间盘|鼻炎|偏头痛|近视|乙肝|痛风|贫血|多动症|自闭症)|我(?:怀孕了|已经怀孕|怀孕\d+)|我(?:是)?(?:乳糖不耐|过敏体质|色盲)"),
    Rule("zh.fact.age", "fact", 0.85, r"我(?:今年|已经|才|都|快)?(?:\d{1,3}|[一二三四五六七八九十两]{1,3})(?:多)?(?:周)?岁"),
    Rule("zh.fact.contact", "fact", 0.85, r"我的?(?:邮箱|电话|手机号?|手机号码|微信号?|地址|住址|QQ号?|qq号?)(?:是|:)"),
    Rule("zh.fact.home", "fact", 0.8,
         r"我(?:们)?(?:家)?(?:现在|目前|一直|从小)?(?:住在|住|生活在|定居在?|长大在)(?!院|不|得|的|着|一晚|一下|酒店)"
         r"|我(?:一直|已经)?在[^\s,.!?。]{1,8}(?:住|生活)了?(?:[\d一二三四五六七八九十两几]+年|很久|很多年)|我来自|我是[^\s,.!?。的个]{1,5}人(?=$|[,.!?。;]|呀|啊|哦|呢|嘛|哈)|我(?:的)?老家(?:是|在)|我的家乡|我家在|我在[^\s,.!?。]{1,8}(?:长大|出生)"),
    Rule("zh.fact.job", "fact", 0.8,
         rf"我(?:是|现在是|目前是|是一?名|是一?个|是一?位|当了|做)(?:一名|一个|一位|个|名|位)?[^\s,.!?。]{{0,6}}?{_Z_JOBS}"
         r"|我(?:现在|目前|一直|平时|大部分时间|主要|每天)?(?:在|是在)[^\s,.!?。]{1,12}(?:工作|上班|办公|任职|实习|读书|上学|念书|读研|读博|读大学|读高中|"
         r"做(?:销售|会计|设计|开发|运营|编程|老师|医生|研究|[^\s,.!?。]{0,3}(?:工作|生意)))"
         r"|我的(?:工作|职业|专业)(?:是|就是)|我从事|我是做[^\s,.!?。]{1,8}的|我(?:在|正在)?读(?:大|高|初|研)[一二三四]|我(?:今年)?(?:大|高|初|研)[一二三四]"
         r"|我学的是|我(?:主修|专业是)|我毕业于|我(?:是)?[^\s,.!?。]{1,12}毕业的|我(?:已经)?退休了?|我(?:现在)?(?:失业|待业)"),
    Rule("zh.fact.family", "fact", 0.8,
         r"我(?:们)?(?:家)?有(?:一个|一只|一条|两个|两只|三个|个|只|条|[\d一二三四五两]+个|[\d一二三四五两]+只)?[^\s,.!?。]{0,4}?"
         r"(?:孩子|儿子|女儿|哥哥|姐姐|弟弟|妹妹|兄弟|姐妹|老婆|老公|妻子|丈夫|男朋友|女朋友|对象|未婚妻|未婚夫|狗|猫|宠物|宝宝|双胞胎|室友)"
         r"|我(?:已经)?(?:结婚了|离婚了|单身|离异|已婚|订婚了|有家庭了)"),
    Rule("zh.preference.diet", "preference", 0.8,
         r"我(?:是)?(?:个)?(?:素食者|素食主义者|吃素的?)|我吃素|我(?:不|从不|从来不|不能)(?:吃|喝)(?:肉|猪肉|牛肉|鱼|海鲜|辣|香菜|酒|咖啡|奶|乳制品|鸡蛋|甜食)"),
    Rule("zh.event.life", "event", 0.8,
         r"我(?:们)?(?:(?:和|跟)[^\s,.!?。]{1,5})?(?:刚|刚刚|终于|今天|昨天|前天|上周|上个月|前几天|最近|已经|去年|今年|也)*(?:结婚了|结婚|订婚|离婚|分手|毕业|升职|加薪|被裁|"
         r"被辞退|被开除|辞职|失业|搬家|搬到|怀孕|生病了|生病|住院|出院|考上|考过了?|通过了|拿到了?(?:offer|驾照|证书|学位|奖学金|录取通知书?)|"
         r"被[^\s,.!?。]{0,8}录取|买了(?:房|车|房子|新房)|生了(?:个|一个)?|领证|求婚|获奖|得奖|得了[^\s,.!?。]{0,4}奖|中奖|入职|"
         r"换了?(?:新)?工作|找到了?(?:新)?工作|开始上班|创业了|出车祸|出了车祸|骨折|受伤了|做了手术|动了手术|养了|当上了?|成为了)"),
    Rule("zh.event.baby", "event", 0.85, r"我(?:们)?[^\s,.!?。]{0,8}(?:要有|有了|生了|怀了|快要有)(?:第[一二三]个|个|一个)?(?:宝宝|孩子|二胎|小孩|宝贝)"),
    Rule("zh.event.people", "event", 0.85,
         rf"我(?:的)?{_Z_PEOPLE}(?:刚|刚刚|昨天|今天|上周|前几天|最近|已经|突然|去年)*(?:去世|走了|过世|离世|住院|生病|病了|出院|结婚|订婚|分手|升职|搬家|生了|"
         r"怀孕|做手术|出事|出车祸|确诊|考上|毕业|离婚|失业)"),
    Rule("zh.decision.decided", "decision", 0.8,
         r"我(?:们)?(?:已经|终于|最后|最终|刚刚?|还是|今天)*(?:决定|下定决心|下决心|拿定主意|做了决定|做出了?决定|选择了|选了|定了|打定主意)(?!不了|吗|了吗)"
         rf"|{_Z_START}(?:就这么定了|就这样定了|那就这样|就选|决定了)(?!吗)|我(?:们)?(?:会|就|还是|最后|最终)选(?!吗|哪|什么|择题)"),
    Rule("zh.decision.from_now_on", "decision", 0.8, r"从(?:今天|现在|明天|今以后|此以后|今往后|下周|下个月)(?:开始|起)?[,，]?\s*(?:我|我们)"),
    Rule("zh.decision.quit", "decision", 0.75,
         r"我(?:们)?(?:要|准备|决定|已经|打算|去年|前年|上个月|上周|早就|终于)*(?:戒掉?|戒了)(?:烟|酒|糖|咖啡|奶茶|游戏|熬夜)|我(?:们)?(?:不再|再也不|以后不|以后再也不)[^\s,.!?。]"
         r"|我(?:已经)?(?:换成|改用|改成|换了)[^\s,.!?。了]"),
    Rule("zh.commitment.remind", "commitment", 0.75, r"提醒我|别让我忘了|不要让我忘了|到时候叫我", dated=0.9, ask_ok=True),
    Rule("zh.commitment.promise", "commitment", 0.75, r"我(?:已经)?答应(?:了)?(?!你)|我(?:跟|和)[^\s,.!?。]{1,6}(?:约好了|约了|说好了)"),
    Rule("zh.commitment.appointment", "commitment", 0.6,
         rf"我(?:们)?(?:{_Z_TIME})*(?:有|要参加|要去参加|得去|要去|约了)(?:一个|个|一场|场|一次|次|两个|\d+个)?[^\s,.!?。]{{0,6}}?"
         r"(?:会议|会|面试|考试|约会|聚会|婚礼|手术|课|比赛|演出|演讲|汇报|答辩|体检|航班|飞机|火车|高铁|旅行|出差|复查|预约|聚餐|年会|派对|活动|培训|讲座|演唱会|音乐会|门诊|检查)",
         dated=0.85),
    Rule("zh.commitment.dated", "commitment", None,
         rf"(?:我(?:们)?|{_Z_START})(?:{_Z_TIME})+(?:要|得|会|就|准备|打算|计划|可能)?(?:去)?(?:考试|面试|开会|出差|答辩|体检|手术|出发|飞|回国|"
         r"回老家|回家|搬家|结婚|上课|加班|值班|比赛|演出|考|见|去|参加|交|入职|报到|约|旅游|旅行|动身|报名)",
         dated=0.85),
    Rule("zh.commitment.goal", "commitment", 0.7, r"我(?:的)?(?:目标|梦想|愿望|计划|新年愿望)(?:是|就是)"),
    Rule("zh.commitment.plan", "commitment", 0.6,
         rf"我(?:们)?(?:{_Z_TIME}(?:之前|以前|之后|以后|前)?|也|还|都|一定|必须|正在|已经|终于)*(?:打算|计划|准备|将要|将|决心|约了|约好|安排了|预约了|预定了|订了|报名了|报了|得|必须|需要|要|会|一定要)",
         dated=0.85, rest=True),
    Rule("zh.commitment.wish", "commitment", 0.5,
         r"我(?:在|正在|一直在)?(?:考虑|琢磨|想着|想要不要|在想要不要)(?!一下|考虑)|"
         rf"我(?:很|真|好|特别|一直|也|还|都|真的)*(?:想要?|希望|渴望|盼望)(?!你|您|知道|问|说|聊|听|看看|吃|喝|睡|休息|哭|笑|你们)"
         rf"(?=(?:{_Z_TIME})*(?:去|学|考|成为|当|买|换|做|试试|尝试|参加|养|开|搬|出国|旅游|旅行|辞职|创业|结婚|减肥|健身|找|提高|改变|早点|能|有|变|练|写|回|见|拿))",
         dated=0.75),
    Rule("zh.preference.favourite", "preference", 0.8,
         r"我(?:最|最最)(?:喜欢|爱)的[^\s,.!?。]{0,8}(?:是|就是)|我(?:的)?(?:爱好|兴趣|兴趣爱好|偶像)(?:是|就是|有)"),
    Rule("zh.preference.like", "preference", 0.7,
         rf"我(?:们)?(?:{_Z_TIME}|{_Z_ADV})*(?:喜欢|爱|热爱|偏爱|喜爱|钟爱|迷上了?|着迷于|沉迷于?|爱吃|爱喝|爱看|爱玩|爱听|讨厌|不喜欢|不爱|不太喜欢|"
         rf"不怎么喜欢|受不了|反感|害怕|不吃|不喝|不能吃|吃不了|喝不了|偏好|倾向于|更喜欢|宁愿|宁可){_Z_NOT_REACTION}[^\s,.!?。了吗呢]"
         rf"|我对[^\s,.!?。]{{1,10}}(?:很|特别|非常|挺|比较|超|蛮)?(?:感兴趣|有兴趣|着迷|上瘾)"
         rf"|{_Z_START}(?:最|特别|超|很|非常|也)?(?:喜欢|爱吃|爱喝|讨厌)(?!你|您|它|这个|那个|吗|不)[^\s,.!?。了吗呢]"),
    Rule("zh.fact.people", "fact", 0.7,
         rf"我(?:的)?{_Z_PEOPLE}(?:{_Z_TIME})*(?:是|在|叫|喜欢|爱|讨厌|有|做|今年|已经|刚|的生日|很|特别|非常|总是|经常|一直|住|工作|开了|当|考|"
         r"要|就要|会|准备|打算)"),
    Rule("zh.fact.personality", "fact", 0.6,
         r"我是(?:一个|个)?[^\s,.!?。]{0,4}?(?:内向|外向|急性子|慢性子|乐观|悲观|完美主义|夜猫子|吃货|宅男|宅女|社恐|工作狂|路痴|i人|e人)"
         r"|我(?:性格|比较|很|有点|挺)(?:内向|外向|社恐|宅)"),
    Rule("zh.fact.skill", "fact", 0.6,
         r"我(?:也|还)?会(?:说|讲|弹|拉|吹|踢|做饭|游泳|画画|编程|写代码|开车|骑|唱|跳舞|滑雪|滑冰|下棋)(?=[^\s,.!?。的了吧])"
         r"|我(?:正在|在|最近在|一直在|开始|已经|刚开始)(?:学习?|练习?|自学)(?!校|生|历|到|会了吗|习了)(?=\s*[^\s,.!?。])"
         r"|我(?:会|能)(?:说|讲)[^\s,.!?。]{0,4}(?:语|话)|我(?:平时|经常|一直)?(?:弹|拉|打|踢)(?:吉他|钢琴|小提琴|鼓|篮球|足球|羽毛球|乒乓球|网球|排球)"
         r"|我(?:正在|在|最近在|最近一直在|一直在)(?:减肥|健身|备考|准备考试|考研|找工作|写[^\s,.!?。]{1,6}|读[^\s,.!?。]{1,6}|"
         r"(?:看|追)(?:一本|一部|一些)?[^\s,.!?。]{0,10}(?:书|小说|剧|漫画|纪录片|动漫|番))"),
    Rule("zh.fact.habit", "fact", 0.55,
         r"我(?:们)?(?:每天|每周|每个?星期|每晚|每天早上|每天晚上|每个?月|每年|平时|一般|通常|经常|总是|从来不|从不|习惯)(?![,.!?。]|都行|都可以)"),
    Rule("zh.fact.state", "fact", 0.5,
         r"(?:我)?(?:最近|这段时间|这几天|这阵子|近来|一直)(?:我)?(?:工作|学习|生活)?(?:都|总是|一直|有点|很|特别|挺)?(?:压力(?:很|特别|好|有点|比较|挺)?大|焦虑|失眠|抑郁|"
         r"心情不好|心情很差|很累|好累|情绪低落|很烦|迷茫|孤独|难过|不开心|伤心|睡不好|睡不着|身体不好|生病|不舒服|很忙|好忙|特别忙)"),
    Rule("zh.event.outing", "event", 0.4,
         r"(?:我(?:们)?(?:今天|昨天|刚才|刚刚|上周末?|周末|前天|前几天|这周|早上|上午|下午|晚上)|(?:今天|昨天|上周末?|周末|前天|前几天)我(?:们)?)"
         r"(?:和[^\s,.!?。]{1,6}|跟[^\s,.!?。]{1,6})?(?:一起)?(?:去了|去|看了|参加了|见了|读完了?|买了|学了|玩了|爬了|跑了|完成了|逛了|旅游|旅行|拜访了?|参观了?)"
         r"(?!上班|上学|工作|公司|厕所|睡觉|吃饭)"),
)
ZH_REMEMBER = re.compile(
    r"(?:^|(?<=[,.!?;:\n。]))\s*(?:请|麻烦|你|你要|帮我|也|还有|另外)*(?:记住|记得|记一下|记下来?|别忘了|不要忘了|帮我记|备注一下)(?!吗|不记得|了吗)|(?:你|请)记住|帮我记")
ZH_HEDGE = re.compile(r"可能|也许|或许|大概|有点|好像|应该吧|说不定|不一定|不太确定|我觉得|我想应该")
ZH_INTENSE = re.compile(r"最|非常|特别|超级?|真的|极其|十分|(?<!不)太|(?<!不)很")
ZH_DATE = re.compile(
    r"明天|明早|明晚|后天|大后天|下周|下星期|下个?礼拜|下个?月|下半年|明年|今年|这个月|本月|本周|这周|这个周末|周末|月底|年底|过几天|过两天|"
    r"周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|\d+月\d*[日号]?|[一二三四五六七八九十]+月|\d+[日号]|[一二三四五六七八九十]+号|"
    r"\d+点|[一两二三四五六七八九十]+点|寒假|暑假|春节|国庆|下学期|开学|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}")
ZH_TODAY = re.compile(r"今天|今晚|待会|一会儿|等下|等会|晚上|下午|上午|中午")
ZH_TRIVIAL = re.compile(
    r"(?:去|先|再|好好|一定|会|要|一直|永远)*(?:一杯|一份|一碗|一瓶|陪着你|陪着|试试|试一试|试一下|尝试一下|考虑|想想|想一想|看看|注意|努力|加油|记住|继续|问|说|知道|理解|明白|睡|睡觉|"
    r"休息|吃饭|吃|喝|洗澡|走了|走|下了|下线|忙了|忙|上厕所|出门|回来|告诉你|跟你说|和你聊|找你|陪你|听你的|照做|做到|坚持|小心|保重|开心|哭|疯|崩溃|死|回去|睡了|去了|的|了|吧|啊|哦|呢)")
ZH_PARTICLES = "的了吧啊呀哦呢啦嘛哈噢喔哟嘞~!?.,。 "
# a Chinese clause that tells what was done (not a plan) unless it names the future
ZH_PAST = re.compile(r"了$|过了|已经|刚才|刚刚")
ZH_FUTURE = re.compile(r"要|会|将|打算|准备|计划|明天|后天|下周|下个|明年|下星期|下礼拜|即将|马上|快")

ASSISTANT_ZH = re.compile(
    rf"我(?:会|将|这就|马上|稍后|到时候?|届时|准时|在|{_Z_TIME})*(?:提醒你|提醒您|给你发|给您发|通知你|通知您|"
    r"帮你(?:预订|预约|订|安排|设置|设定|预定|记下|添加|加到|取消|查好|定好)|帮您(?:预订|预约|订|安排|设置|设定|预定|记下|添加|取消)|为你(?:预订|安排|设置)|为您(?:预订|安排|设置))"
    r"|已(?:经)?(?:帮你|为你|给你|帮您|为您|给您)(?:设置|设好|预订|预约|安排|添加|记下|订好?|发送|取消)|提醒已(?:设置|设好)|闹钟已(?:设置|设好)")

# ============================================================================ what is not worth it
# whole clauses (after punctuation, emoji and a trailing "there" / "again" ... are dropped)
_EN_PLEASANTRY = tuple((
    "hi|hello|hey|hiya|yo|howdy|greetings|good morning|good afternoon|good evening|good night|goodnight|good day|"
    "morning|evening|gm|gn|night|nighty night|sweet dreams|thanks|thank you|thank you so much|thx|ty|tysm|"
    "many thanks|cheers|much appreciated|appreciate it|i appreciate it|i appreciate that|i appreciate your help|"
    "thanks for your help|thank you for your help|thanks for the help|thank you for your advice|"
    "thanks for the advice|thank you for your suggestions|thanks for listening|thank you for listening|"
    "thanks for the info|thanks for the tip|thanks for the tips|bye|goodbye|bye bye|see you|see you later|"
    "see you soon|see you tomorrow|see ya|later|talk to you later|talk later|talk soon|ttyl|take care|"
    "have a good day|have a nice day|have a great day|have a good night|have a good one|have a nice weekend|you too|"
    "same to you|ok|okay|okey|k|kk|sure|alright|all right|fine|got it|gotcha|i see|understood|noted|sounds good|"
    "sounds great|no problem|np|you are welcome|welcome|no worries|of course|yes|yeah|yep|yup|no|nope|nah|right|"
    "exactly|indeed|sure thing|sorry|my bad|how are you|how are you doing|how are you today|how are you doing today|"
    "how is it going|what is up|sup|how have you been|nice to meet you|pleased to meet you|good to see you|"
    "long time no see|i am fine|i am good|i am ok|i am okay|i am great|i am well|i am doing well|i am doing good|"
    "i am doing great|i am doing fine|not bad|i have to go|i need to go|i got to go|got to go|i am going to bed|"
    "i am going to sleep|going to bed|time for bed|brb|be right back|i will talk to you later|good|great|perfect|"
    "cool|nice|awesome|will do|i will|that is all|that is it|nothing|thank u|oh ok|oh okay|ah ok|ok thanks|"
    "okay thanks|ok thank you|okay thank you|yes please|no thanks|no thank you|hi again|hello again|how is your day|"
    "how is your day going|how was your day|how is everything|how are things|how is your weekend|"
    "how was your weekend|talk tomorrow|chat later|chat tomorrow|catch you later|good night talk tomorrow|"
    "i will keep that in mind|i will keep it in mind|i will try|i will try that|i will try it|i will do that|"
    "i will think about it|i will give it a try|i will give it a shot|i will do my best"
).split("|"))
_EN_CHITCHAT = (
    r"(?:lol|lmao|rofl|haha+|hehe+|hah|hmm+|um+|uh+|oh+|ah+|wow|oops|yay|omg|damn|ugh|meh|aw+|nice one)",
    r"that is (?:so |really |very |pretty )?(?:great|cool|funny|interesting|nice|awesome|amazing|good|true|fair|sad|"
    r"too bad|a good (?:idea|point|question)|hilarious|wonderful|terrible|crazy|wild|sweet|lovely|helpful|"
    r"good to know|right|correct)",
    r"(?:interesting|i agree(?: with you)?(?: completely| totally| 100%)?|i see what you mean|makes sense|that makes sense|good (?:idea|point)|"
    r"you are (?:right|funny|smart|the best|so kind|sweet|awesome)|really|me too|same here|true|fair enough|"
    r"i know|i love it|i love that|i like it|i like that|i love you|love you|i miss you|miss you|you are welcome|"
    r"not really|i do not know|i am not sure|maybe|who knows|whatever|never mind|nevermind)",
    r"i am (?:so |very |really |a bit |kind of )?(?:bored|tired|sleepy|hungry|happy|sad|excited|fine|good|okay|ok|back|here)"
    r"(?: (?:today|now|right now|tonight|again|too))?",
    r"(?:the )?weather is \w+(?: \w+){0,4}|it is (?:so |really )?(?:hot|cold|raining|sunny|snowing|nice out)(?: \w+){0,3}",
)
_ZH_PLEASANTRY = tuple((
    "你好|您好|嗨|哈喽|哈啰|嘿|早|早上好|早安|上午好|中午好|下午好|晚上好|晚安|大家好|谢谢|谢谢你|谢谢您|多谢|感谢|谢啦|谢了|太感谢了|非常感谢|感谢你|辛苦了|谢谢你的建议|"
    "谢谢你的帮助|谢谢你的安慰|谢谢你的鼓励|谢谢你的回答|谢谢你的陪伴|谢谢你听我说|谢谢你的关心|再见|拜拜|拜|回头见|明天见|下次见|下次聊|下次再聊|改天聊|改天再聊|先这样|就这样|回聊|"
    "好的|好|好吧|好啊|好嘞|行|行吧|可以|没问题|没事|不客气|收到|明白|明白了|知道了|了解|了解了|懂了|嗯|嗯嗯|哦|噢|哦哦|对|是的|是啊|没错|对的|对啊|对不起|抱歉|不好意思|"
    "你好吗|最近好吗|最近怎么样|在吗|在不在|我很好|我挺好的|我还好|还好|还行|我去睡了|我要睡了|我去睡觉了|我要去睡觉了|我先睡了|我先走了|我先下了|去睡了|睡了|我走了|好的谢谢|"
    "好的谢谢你|嗯好的|好的好的|ok|okay|hello|hi|bye|thanks|当然|是|不是|不用了|不用|不用谢|没关系|很高兴认识你|认识你很高兴|你也是|你也早点休息|早点休息|我会的|"
    "会的|一定|我会记住的|我记住了|记住了|我会试试的|我会试试|我试试|我会注意的|我知道了|我明白了|我会努力的|我会好好考虑的|我考虑一下|我想想|明天聊|明天再聊|回头聊|晚点聊|待会聊|"
    "今天过得怎么样|你今天过得怎么样|最近过得怎么样|你最近怎么样"
).split("|"))
_ZH_CHITCHAT = (
    r"(?:哈)+|(?:呵)+|(?:嘿)+|(?:嘻)+|(?:呜)+|哇+|天哪|我的天|真棒|太棒了|太好了|厉害|好厉害|不错|挺好|挺好的|有意思|有道理|说得对|"
    r"真的吗|是吗|是嘛|真的|原来如此|原来是这样|我也是|我也这么觉得|我也觉得|好无聊|好累|好困|好饿|我好无聊|我好累|我好困|我好饿|"
    r"我同意|我同意你的看法|我同意你说的|我很无聊|我很累|无聊|好开心|我好开心|我很开心|开心|哎|唉|算了|随便|不知道|我不知道|也是|确实|可能吧|也许吧|嗯哼|好吧好吧|"
    r"我爱你|爱你|我喜欢你|想你了|我想你了|你真好|你真棒|你太好了|你好可爱|你好厉害|你说得对|我懂|懂|啊这|帮了大忙|帮了我大忙|很有帮助|非常有帮助|太有帮助了|有用|很有用",
    r"(?:今天)?天气(?:真|很|好|不错|挺|太)[^\s,.!?。]{0,6}",
)


def _alternation(words) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_EN_PLEASANT_RE = re.compile(rf"(?:{_alternation(_EN_PLEASANTRY)})(?:\s+(?:{_alternation(_EN_PLEASANTRY)}))*")
_EN_CHITCHAT_RE = re.compile("|".join(_EN_CHITCHAT))
_ZH_PLEASANT_RE = re.compile(rf"(?:{_alternation(_ZH_PLEASANTRY)})(?:\s*(?:{_alternation(_ZH_PLEASANTRY)}))*")
_ZH_CHITCHAT_RE = re.compile("|".join(_ZH_CHITCHAT))
# words that may trail a pleasantry ("thanks so much", "hi there")
_EN_VOCATIVES = frozenset("there|everyone|everybody|all|guys|friend|buddy|pal|man|dude|bot|assistant|again|too|so much|a lot|"
                          "very much|lots|mate|dear|bro|sis|then|for now|now|for the night|tonight".split("|"))
_ZH_TRAILING = re.compile(r"[啊呀哦啦吧呢嘛哈噢喔哟嘞咯哇~]+$")

# questions and requests to the assistant
EN_QUESTION_START = re.compile(
    r"(?:(?:so|and|but|also|then|oh|hey|ok|okay|well|btw|please)\s+)*(?:(?:what|why|how|when|where|who|whom|whose|which)\s+"
    r"(?:do|does|did|is|are|was|were|can|could|would|will|should|shall|have|has|am|about|if|many|much|long|often|kind|"
    r"type|sort|else|you|i|we|it|to|would|exactly|the)\b|(?:what|why|how|where|who|which)$|(?:do|does|did|is|are|was|"
    r"were|can|could|would|will|should|shall|may|might|have|has|am|any|anything)\s+(?:you|i|we|it|there|they|he|she|"
    r"this|that|the|my|your|anyone|someone|a|an|u)\b|(?:tell me|help me|explain|give me|show me|recommend|suggest|"
    r"write|translate|summari[sz]e|list|describe|find|search|calculate|what about|how about|any (?:tips|ideas|"
    r"suggestions|advice|recommendations)))")
ZH_QUESTION_WORDS = re.compile(r"什么|怎么|为什么|为啥|如何|哪|谁|几|多少|是否|是不是|能不能|可不可以|会不会|有没有|要不要|好不好|"
                               r"对不对|行不行|咋|啥")
ZH_QUESTION_END = re.compile(r"(?:吗|么|呢|不|没|没有|否|嘛)[啊呀哦~]*$")
ZH_REQUEST_START = re.compile(r"(?:请问|请你|请|你能|你可以|能不能|可以帮|可不可以|帮我|给我|告诉我|推荐|你觉得|你认为|你知道|你说|"
                              r"你有|你会|你喜欢|你是|麻烦你|教我|帮忙)")
EN_CONDITION = re.compile(r"(?:(?:and|but|so|even)\s+)?(?:if|unless|in case|suppose|supposing|what if|as if|imagine|"
                          r"hypothetically|whether|i (?:wonder|am wondering|was wondering|do not know|am not sure) "
                          r"(?:if|whether))\b")
ZH_CONDITION = re.compile(r"(?:如果|要是|假如|假设|万一|即使|就算|要不是|除非|倘若|如若)|的话$")

# ============================================================================ machinery
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[a-zà-ÿ]{2,}")
_LATIN_LETTER = re.compile(r"[a-zà-ÿ]")
_LETTER = re.compile(r"[^\W\d_]")
# clause boundaries: punctuation (kept with the clause before it: a "?" says it asks), a few
# conjunctions, brackets and quotes
_BOUNDARY = re.compile(r"[,.!?;:\n。、…~]+|\s+(?:but|and then|because|though|although)\s+|[()（）\[\]\"“”]")
_SENTENCE_END = re.compile(r"[.!?\n。…]+")
_CONTRACTION = re.compile(r"\b(?:" + _alternation(EN_CONTRACTIONS) + r")\b")
_FENCED = re.compile(r"```.*?(?:```|$)", re.S)
_EN_WORD = re.compile(r"[a-z0-9']+")
_NOT_WORD = re.compile(r"[^\w\s']+")
_NOT_WORD_ZH = re.compile(r"[^\w]+")
_ASSISTANT_ROLES, _USER_ROLES = frozenset({"assistant", "ai", "bot", "model", "agent"}), frozenset({"user", "human", ""})
_EN_PLEASANT_SET, _ZH_PLEASANT_SET = frozenset(_EN_PLEASANTRY), frozenset(_ZH_PLEASANTRY)
# words an explicit request to remember needs (a cheap test before EN_REMEMBER / ZH_REMEMBER)
_EN_REMEMBER_WORDS = ("remember", "note", "keep in mind", "forget", "record", "fyi", "so you know", "future reference",
                      "save this", "write th")
_ZH_REMEMBER_WORDS = ("记", "忘", "备注")


@cache
def _compiled(lang: str) -> tuple[re.Pattern[str], tuple[re.Pattern[str], ...]]:
    """One pattern for all rules of `lang` (each a group named after its index) and one per rule,
    compiled on first use (about 0.1 s, not paid by an import that never judges)."""
    rules = EN_RULES if lang == "en" else ZH_RULES
    return (re.compile("|".join(f"(?P<r{i}>{rule.pattern})" for i, rule in enumerate(rules))),
            tuple(re.compile(rule.pattern) for rule in rules))


# Where a rule can start besides a clause start: its first word (tests check every rule against these).
EN_STARTS = re.compile(r"\b(?:i|we|my|his|her|their|our|it|call|name|from|starting|let|remind|do|never|set|lately|"
                       r"recently|these)\b")
ZH_STARTS = re.compile(r"我|从|提醒|别让|不要让|到时候|是(?=我|他|她)|他|她|你好|您好|嗨|哈喽|大家好|最近|这段|这几|这阵|近来|一直|"
                       r"今天|昨天|上周|周末|前天|前几")


def judge(text: str, role: str = "user") -> Judgement:
    """Whether a chat message is worth remembering, of which kind and how important (module doc)."""
    if not isinstance(text, str) or not text.strip():
        return Judgement(False, "other", None, "empty")
    text = text if len(text) <= MAX_CHARS else text[:MAX_CHARS]
    t = unicodedata.normalize("NFKC", text).lower().replace("’", "'").replace("‘", "'")
    if "```" in t:
        t = _FENCED.sub(" ", t)  # code is no memory
    t = t.strip()
    if not _LETTER.search(t):
        return Judgement(False, "chitchat", None, "no words")
    has_zh = _CJK.search(t) is not None
    has_en = _LATIN.search(t) is not None or (not has_zh and _LATIN_LETTER.search(t) is not None)
    if has_zh and has_en:
        lang = "zh" if len(_CJK.findall(t)) * 3 >= len(_LATIN_LETTER.findall(t)) else "en"
    else:
        lang = "zh" if has_zh else "en"
    if has_en:
        t = _CONTRACTION.sub(lambda m: EN_CONTRACTIONS[m.group(0)], t)
    bounds = _clauses(t)
    role = (role or "").strip().lower()
    if role in _ASSISTANT_ROLES:
        return _assistant(t, bounds, lang, has_en, has_zh)
    if role not in _USER_ROLES:
        return Judgement(False, "other", None, f"{role} turn")
    best: tuple[float, int, str, str] | None = None  # (importance, -tie order, kind, reason)
    if has_en:
        best = _hits(t, bounds, EN_STARTS, *_compiled("en"), EN_RULES, "en", best)
    if has_zh:
        best = _hits(t, bounds, ZH_STARTS, *_compiled("zh"), ZH_RULES, "zh", best)
    remember = _remember(t, has_en, has_zh)
    if best is None and remember is None:
        return _not_worthy(t, bounds, lang)
    if best is None:
        return Judgement(True, "fact", REMEMBER_IMPORTANCE, f"{remember}.remember")
    importance, _, kind, reason = best
    if remember is not None:
        importance = max(REMEMBER_IMPORTANCE, importance + REMEMBER_BONUS)
        reason += "+remember"
    return Judgement(True, kind, round(min(0.95, max(0.1, importance)), 2), reason)


def _clauses(t: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of `t`, the end after the clause's punctuation."""
    ends = [m.end() for m in _BOUNDARY.finditer(t)]
    if not ends or ends[-1] < len(t):
        ends.append(len(t))
    return list(zip([0] + ends[:-1], ends))


def _clause_of(bounds: list[tuple[int, int]], pos: int) -> tuple[int, int]:
    return next(((start, end) for start, end in bounds if start <= pos < end), bounds[-1])


def _candidates(t: str, bounds: list[tuple[int, int]], starts: re.Pattern[str]) -> list[int]:
    """Where a rule can start: clause starts (after at most one space, as ``_CLAUSE``) and ``starts``."""
    places = {start + 1 if t[start:start + 1] == " " else start for start, _ in bounds}
    places.update(m.start() for m in starts.finditer(t))
    return sorted(places)


def _hits(t: str, bounds, starts: re.Pattern[str], compiled: re.Pattern[str], each: tuple[re.Pattern[str], ...],
          rules: tuple[Rule, ...], lang: str, best):
    """The best hit so far, with the hits of `rules` in `t`: every rule matching at each candidate place."""
    for place in _candidates(t, bounds, starts):
        found = compiled.match(t, place)  # the first rule that matches here; then those after it
        if found is None:
            continue
        first = int(found.lastgroup[1:])
        best = _hit(t, bounds, found, rules[first], lang, best)
        for index in range(first + 1, len(rules)):
            m = each[index].match(t, place)
            if m is not None:
                best = _hit(t, bounds, m, rules[index], lang, best)
    return best


def _hit(t: str, bounds, m: re.Match[str], rule: Rule, lang: str, best):
    """`best` or this hit, whichever is more important (a hit that does not count leaves `best`)."""
    start, end = _clause_of(bounds, m.start())
    clause = t[start:end]
    if _conditional(clause, lang):
        return best
    if not rule.ask_ok and _asks(t, start, end, lang) and not _remember(clause, True, True):
        return best
    dated = (EN_DATE if lang == "en" else ZH_DATE).search(clause) is not None
    today = not dated and (EN_TODAY if lang == "en" else ZH_TODAY).search(clause) is not None
    if rule.rest and not (dated or today) and _trivial(t[m.end():end], lang):
        return best
    if rule.importance is None and not (dated or today):
        return best
    if lang == "zh" and rule.kind == "commitment" and not rule.ask_ok and ZH_PAST.search(clause.rstrip(" ,.!?;:。、…~\n")) \
            and not ZH_FUTURE.search(clause):
        return best  # 我今天去上班了: done, not planned
    importance = rule.importance if rule.importance is not None else 0.0
    suffix = ""
    if rule.dated is not None and (dated or today):
        importance = rule.dated if dated else min(rule.dated, TODAY_IMPORTANCE)
        suffix = "+date" if dated else "+today"
    if (EN_HEDGE if lang == "en" else ZH_HEDGE).search(clause):
        importance -= HEDGE_PENALTY
        suffix += "-hedge"
    elif rule.kind == "preference" and (EN_INTENSE if lang == "en" else ZH_INTENSE).search(clause):
        importance += INTENSIFIER_BONUS
        suffix += "+strong"
    key = (importance, -_TIE_ORDER[rule.kind], rule.kind, rule.name + suffix)
    return key if best is None or key[:2] > best[:2] else best


def _asks(t: str, start: int, end: int, lang: str) -> bool:
    """Whether the clause t[start:end] is a question or a request to the assistant."""
    clause = t[start:end].strip()
    body = clause.rstrip(",.!?;:。、…~ \n")
    if "?" in clause:  # a question, or the last clause of one
        return True
    if lang == "en":
        return EN_QUESTION_START.match(body) is not None
    if ZH_QUESTION_END.search(body) or ZH_REQUEST_START.match(body):
        return True
    sentence_end = _SENTENCE_END.search(t, end)  # a question word in a sentence that ends with "?"
    return sentence_end is not None and "?" in sentence_end.group(0) and ZH_QUESTION_WORDS.search(body) is not None


def _conditional(clause: str, lang: str) -> bool:
    body = clause.strip()
    return (EN_CONDITION.match(body) if lang == "en" else ZH_CONDITION.search(body)) is not None


def _trivial(rest: str, lang: str) -> bool:
    """Whether the words after a plan's verb say nothing to remember ("try it", 去睡觉了)."""
    rest = rest.strip(" ,.!?;:。、…~\n")
    if lang == "en":  # "I need to know how ..." is a question in disguise
        m = None if _EN_INFO.match(rest) else EN_TRIVIAL.match(rest)
        words = _EN_WORD.findall(rest[m.end():] if m else rest)
        return _EN_INFO.match(rest) is not None or sum(1 for w in words if w not in EN_STOP and len(w) > 2) < 2
    body = rest.strip(ZH_PARTICLES)
    m = ZH_TRIVIAL.match(body)
    return len(_CJK.findall(body)) + len(_LATIN.findall(body)) < 2 or (m is not None and len(body[m.end():].strip(ZH_PARTICLES)) <= 2)


def _remember(t: str, has_en: bool, has_zh: bool) -> str | None:
    """The language of an explicit request to remember in `t` (not a question about the past), else None."""
    if has_en and any(word in t for word in _EN_REMEMBER_WORDS):
        m = EN_REMEMBER.search(t)
        if m and not re.match(r"\s*(?:do|did) you remember\b|\s*remember (?:when|what|how|where|who|the time)\b",
                              t[m.start():]):
            return "en"
    if has_zh and any(word in t for word in _ZH_REMEMBER_WORDS):
        m = ZH_REMEMBER.search(t)
        if m and not re.match(r"\s*你?记得[^\s,.!?。]{0,15}(?:吗|么)", t[m.start():]):
            return "zh"
    return None


def _assistant(t: str, bounds, lang: str, has_en: bool, has_zh: bool) -> Judgement:
    """An assistant turn is worthy only when it commits to something concrete for the user."""
    for pattern, name, present in ((ASSISTANT_EN, "en", has_en), (ASSISTANT_ZH, "zh", has_zh)):
        m = pattern.search(t) if present else None
        start, end = _clause_of(bounds, m.start()) if m else (0, 0)
        clause = t[start:end]
        if m is None or _conditional(clause, name) or "?" in clause or EN_QUESTION_START.match(clause.strip()):
            continue
        dated = any(p.search(clause) for p in ((EN_DATE, EN_TODAY) if name == "en" else (ZH_DATE, ZH_TODAY)))
        return Judgement(True, "commitment", 0.8 if dated else 0.6, f"{name}.assistant.commitment" + "+date" * dated)
    return Judgement(False, _not_worthy(t, bounds, lang).kind, None, f"{lang}.assistant")


def _not_worthy(t: str, bounds, lang: str) -> Judgement:
    """The kind of a message without a hit. A clause is a pleasantry, else chitchat, else a question when it
    asks, else the rest; one question makes the message one, one rest makes it other (chitchat when short)."""
    kinds = set()
    for start, end in bounds:
        body = t[start:end].strip(" ,.!?;:。、…~\n()（）[]\"“”")
        if not body or not _LETTER.search(body):
            continue
        clause_lang = "zh" if lang == "zh" or _CJK.search(body) else "en"
        if _asks(t, start, end, clause_lang):
            kind = _small_talk(body, clause_lang) or "question"
            if kind == "question":
                return Judgement(False, "question", None, f"{lang}.question")
        elif "rest" in kinds:
            continue  # what this clause is changes nothing now: only a question would
        else:
            kind = _small_talk(body, clause_lang) or "rest"
        kinds.add(kind)
    if "pleasantry" in kinds and kinds <= {"pleasantry", "chitchat"}:
        kind = "pleasantry"  # "thanks, that's helpful": the thanks is what it is
    elif kinds <= {"chitchat"} or (len(_EN_WORD.findall(t)) <= SHORT_EN_WORDS if lang == "en"
                                   else len(_CJK.findall(t)) <= SHORT_ZH_CHARS):
        kind = "chitchat"
    else:
        kind = "other"
    return Judgement(False, kind, None, f"{lang}.{kind}")


def _small_talk(body: str, lang: str) -> str | None:
    """"pleasantry" or "chitchat" when the clause `body` is one (``_EN_PLEASANTRY`` ...), else None."""
    if lang == "en" or _CJK.search(body) is None:
        words = _NOT_WORD.sub(" ", body).split()
        while len(words) > 1:  # drop trailing ``_EN_VOCATIVES``, never the first word
            cut = next((n for n in (3, 2, 1) if len(words) > n and " ".join(words[-n:]) in _EN_VOCATIVES), 0)
            if not cut:
                break
            del words[-cut:]
        if len(words) > 10:
            return None
        plain = " ".join(words)
        if plain in _EN_PLEASANT_SET or _EN_PLEASANT_RE.fullmatch(plain):
            return "pleasantry"
        return "chitchat" if _EN_CHITCHAT_RE.fullmatch(plain) else None
    plain = _ZH_TRAILING.sub("", _NOT_WORD_ZH.sub("", body))
    if plain in _ZH_PLEASANT_SET or (len(plain) <= 16 and _ZH_PLEASANT_RE.fullmatch(plain)):
        return "pleasantry"
    return "chitchat" if len(plain) <= 16 and _ZH_CHITCHAT_RE.fullmatch(plain) else None


__all__ = ["ASSISTANT_EN", "ASSISTANT_ZH", "EN_RULES", "EN_STARTS", "KINDS", "MEMORY_KINDS", "ZH_RULES", "ZH_STARTS",
           "Judgement", "Rule", "judge"]
