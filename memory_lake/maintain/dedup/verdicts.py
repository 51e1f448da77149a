"""What the contradiction guard answers (seed 004: dedup never merges contradictions).

A changed value, date, negation, antonym or swap is a sign of a contradiction: the pair goes to the
``conflicts`` queue as kind ``contradiction`` for a person to decide. A changed identifier or a
replaced word means two different memories ("ticket 88" / "ticket 89", "updates about billing" /
"about search"): they are kept apart and counted, not queued. The reasons of that second kind are
``DIFFERENT``: ``CHANGED_VALUE`` (a content word replaced by one that is not its synonym, or new
detail), ``IDENTIFIER`` (a changed identifier or code), ``OTHER_SPEAKER`` and ``NO_STATEMENT`` (chat
turns, issue 35), ``OTHER_THING`` (a changed value of two different things) and ``UNREADABLE`` (a
pair the guard raised on: never merged on doubt).
"""

from __future__ import annotations

CHANGED_VALUE = "changed value"
IDENTIFIER = "identifier"
# Chat (issue 35, ``chat.py``): two turns by different speakers say what each of them thinks, and
# a turn of greetings, thanks, goodbyes or questions states no fact: never a contradiction.
OTHER_SPEAKER = "other speaker"
NO_STATEMENT = "states nothing"
# A changed value of two different things ("the checklist for Hooli by Nov 26" / "for Wayne Retail
# by Nov 14", "the churn report every Monday" / "the SLA report every Tuesday"): two memories.
OTHER_THING = "other thing"
# A pair the guard raised on (recorded as a step error): kept apart, never merged on doubt.
UNREADABLE = "unreadable"
# Reasons that mean two different memories, not one fact with two values: kept apart, not queued.
DIFFERENT = (CHANGED_VALUE, IDENTIFIER, OTHER_SPEAKER, NO_STATEMENT, OTHER_THING, UNREADABLE)
