"""A long, realistic planning conversation for the summary tests (seed 000 example 1).

An operations lead and an assistant plan a warehouse migration over 30 turns. The facts (decisions,
todos, events, lessons, with their numbers, dates and names) are hand-written; the talk around them
is explanation, hedging and process, built from hand-written clause fragments so that no sentence
repeats and none carries a number, a date, a name or a decision/todo cue. Deterministic (seeded).
"""

from __future__ import annotations

import random

# (turn index among the 25 older turns, sentence): the key facts of the older turns.
FACTS = [
    (1, "We decided to move the nightly ETL from cron to Prefect on March 3."),
    (2, "The outage on February 12 lasted 47 minutes and dropped 1,200 checkout events."),
    (3, "Lesson: the root cause was a missing index on the orders table, so always check query plans before a release."),
    (4, "Priya agreed to own the migration of the billing tables."),
    (5, "TODO: Marco needs to rotate the warehouse credentials by March 10."),
    (6, "We chose DuckDB over Spark for the staging layer because the largest table is only 180 GB."),
    (7, "The load test on February 20 reached 3,500 rows per second on the new pipeline."),
    (8, "Lesson: avoid schema changes on Fridays; the rollback on February 16 took 3 hours."),
    (9, "Priya needs to write the runbook for the Prefect deployment by March 14."),
    (10, "We agreed to keep Parquet files for 90 days in the raw zone."),
    (11, "Anna joined the planning meeting on February 24 and approved the budget of 12,000 euros."),
    (12, "TODO: Marco will send the cost report to Anna by March 7."),
    (13, "We decided to retire the legacy Airflow server after the cutover on March 21."),
    (14, "The dry run on February 27 finished in 38 minutes, down from 95 minutes."),
    (15, "Lesson: the timeout came from the VPN, not from DuckDB, so check network paths first."),
    (16, "Marco needs to set up alerts in Grafana before the cutover."),
    (17, "We approved a freeze on dashboard changes from March 18 to March 22."),
    (18, "The security review with Lena on March 1 found 2 open issues in the access policy."),
    (19, "Lena needs to close both access policy issues by March 12."),
    (20, "We settled on 06:00 UTC as the daily start time of the pipeline."),
    (21, "Lesson: the backfill failed because of daylight saving, so store every timestamp in UTC."),
    (22, "Priya will publish the migration status every Monday in the data channel."),
    (23, "The rehearsal on March 5 moved 2.4 TB without a single failed task."),
    (24, "TODO: Anna has to confirm the go-live date with the finance team by March 15."),
]

_OPENERS = [
    "Honestly,", "In my experience,", "From what I have seen,", "Broadly speaking,", "To be fair,",
    "Looking at it from the operations side,", "Thinking about it a bit more,", "On reflection,",
    "As a general pattern,", "If I am being careful here,", "Stepping back for a second,",
    "Speaking from past migrations,", "Put simply,", "With that in mind,", "At a high level,",
    "Without overcomplicating it,", "Taking the pragmatic view,", "In most teams I have worked with,",
    "Realistically,", "Looking at the bigger picture,",
]
_SUBJECTS = [
    "the hardest part of a migration like this", "keeping the old and the new pipeline side by side",
    "the way the staging layer is laid out", "the amount of tribal knowledge around the current jobs",
    "the balance between speed and safety", "the shape of the incoming data",
    "the habit of patching jobs by hand", "the monitoring story for the batch jobs",
    "the question of who gets paged at night", "the way retries are configured today",
    "the documentation of the existing transformations", "the coupling between the dashboards and the raw tables",
    "the testing strategy for the transformations", "the handling of late-arriving records",
    "the permissions model for the analysts", "the storage layout of the historical data",
    "the cost profile of the current setup", "the way partial failures surface to the team",
    "the ownership of each downstream report", "the communication with the teams that consume the data",
]
_VERBS = [
    "tends to matter more than the tooling itself", "usually sets the mood of the whole cutover",
    "is easy to underestimate until something breaks", "deserves a bit of attention before anything else moves",
    "shapes how much confidence people have in the numbers", "often hides a surprising amount of complexity",
    "is where small shortcuts quietly add up", "can turn a routine change into a long evening",
    "gets much simpler once it is written down", "is something worth revisiting once the dust settles",
    "rarely shows up in planning documents but always shows up in practice",
    "is the kind of thing that looks trivial on a whiteboard",
    "benefits from being boring and predictable", "affects how quickly the team can recover from mistakes",
    "tends to drift unless someone keeps an eye on it", "makes a real difference to the on-call experience",
    "is usually cheaper to fix early than late", "influences how much of the old behaviour we can drop",
    "quietly determines how painful the first weeks will be", "says a lot about how mature the platform is",
]
_TAILS = [
    "so it helps to keep that in view.", "and that is worth saying out loud.", "which is why I keep coming back to it.",
    "even if it does not feel urgent right now.", "at least in the setups I have looked at.",
    "and the people closest to the data usually know it.", "so a little patience goes a long way.",
    "and it is better to be explicit about it.", "which tends to surprise newer teams.",
    "so I would not skip over it.", "and it pays off in the long run.", "even when everything else looks fine.",
    "which is easy to forget in the middle of the work.", "and there is no shortcut around it.",
    "so it is worth a short conversation with the team.", "and that shapes the rest of the plan.",
    "which keeps the surprises small.", "so I would treat it as part of the work, not an extra.",
    "and most of the effort goes there.", "which makes the rest noticeably easier.",
]
_USER_LINES = [
    "Thanks, that helps a lot.", "Okay, got it.", "Sounds good.", "Great, thank you!", "Sure.",
    "Hmm, I see.", "Makes sense.", "Thanks for the detail.", "Okay.", "Perfect, thanks.",
]
_QUESTIONS = [
    "What would you look at first in our setup?", "How would you explain this to the analysts?",
    "Is there anything in the current jobs that worries you?", "How do you usually keep a migration like this on track?",
    "What tends to go wrong in the first weeks?", "How much of the old logic should we carry over?",
    "How would you structure the rollout?", "What would a calm cutover look like to you?",
    "Where do teams usually lose time?", "How do we keep the stakeholders informed without drowning them?",
    "What is the risk of running both pipelines in parallel?", "How would you test the transformations?",
    "What should the on-call person know?", "How do we know the numbers match?",
]


def _filler(rng: random.Random, used: set[str], n: int) -> list[str]:
    """`n` sentences of talk, none used before (a sentence is opener + subject + verb + tail)."""
    out = []
    while len(out) < n:
        sentence = f"{rng.choice(_OPENERS)} {rng.choice(_SUBJECTS)} {rng.choice(_VERBS)}, {rng.choice(_TAILS)}"
        if sentence not in used:
            used.add(sentence)
            out.append(sentence)
    return out


def build_conversation(turns: int = 30, filler: int = 30, seed: int = 5) -> list[dict[str, str]]:
    """The conversation as chat messages: even turns the user's, odd turns the assistant's. The
    facts of FACTS land in the older turns; the assistant explains at length (`filler` sentences a
    turn) around them."""
    rng = random.Random(seed)
    used: set[str] = set()
    by_turn: dict[int, list[str]] = {}
    for index, fact in FACTS:
        by_turn.setdefault(index, []).append(fact)
    messages = []
    for k in range(turns):
        if k % 2 == 0:
            text = [rng.choice(_USER_LINES), rng.choice(_QUESTIONS)]
            text[1:1] = by_turn.get(k, [])
            messages.append({"role": "user", "content": " ".join(text)})
        else:
            body = _filler(rng, used, filler)
            for fact in by_turn.get(k, []):
                body.insert(rng.randrange(len(body) + 1), fact)
            messages.append({"role": "assistant", "content": " ".join(body)})
    return messages
