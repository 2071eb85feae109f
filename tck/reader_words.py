"""The kit's outcomes in the words a reader sees, for every page the kit writes.

Inside the kit the outcomes stay distinct (``scenarios.result.Verdict``: pass, fail, warn, skip, xfail,
xpass, error), and ``report.json``, ``results.jsonl`` and the Spark tables keep them so.  A reader who has
never seen the kit asks one question of a page, "does it conform?", so the run report and the published
site both speak five words, from this one mapping:

- a known failure (xfail) *is* a failure: the word is "fail", with a label "known" beside it;
- a known failure that did not show (xpass) is a "pass", labelled so;
- a SHOULD not met (warn) is a "warning"; a scenario not run (skip) is "not run"; a scenario the kit
  could not run to a verdict (error) is "not judged".
"""

from __future__ import annotations

READER_WORDS = {"pass": "pass", "xpass": "pass", "fail": "fail", "xfail": "fail", "warn": "warning",
                "skip": "not run", "error": "not judged"}
# The words in the order a count row shows them.
SHOWN_WORDS = ("pass", "fail", "warning", "not run", "not judged")
# Worst first: a rule's word is the worst of its results' words.
WORD_ORDER = ("fail", "warning", "not judged", "pass", "not run")
# The label beside a known outcome's word.
KNOWN_LABELS = {"xfail": "known", "xpass": "known failure did not show"}
# The outcomes of a run in which a scenario failed (for flakiness): a known failure is a failure; a known
# failure that did not show, and an error (no verdict), are not.
FAILED_OUTCOMES = ("fail", "xfail")


def word(outcome: str) -> str:
    """An outcome as a reader sees it; an unknown one (a rule's ``untested``) as it is."""
    return READER_WORDS.get(outcome, outcome)


def word_class(shown: str) -> str:
    """A word as a CSS class name: ``not run`` -> ``not-run``."""
    return shown.replace(" ", "-")
