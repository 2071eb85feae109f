"""Bug reports ready to file upstream, one per live FINDINGS.md entry (``rsio-tck report --finding F7``).

Theory of operation.  FINDINGS.md is the kit's record of each deviation it found in a real
implementation; the interop baselines say which scenario, client test case or grid cell shows each one.
A report joins the two and adds what an implementation's author needs and the kit's files only point to:

- ``entries`` reads FINDINGS.md's entries (``### F<n>. <implementation> <version> ... — RULE``) into their
  labelled facts (**Spec**, **Observed**, **Cause**, **Tracker**, ...), from text;
- ``baselines`` reads ``interop/*/baseline.txt``, ``interop/matrix-baseline.txt`` and the versions pinned by
  ``interop/run.py``, from text; ``sources`` reads those files from the checkout, the package's only input;
- ``spec`` quotes the kit's SPEC.md (a rule's statement, a decision) and links Protocol.md citations upstream;
- ``repro`` copies the cited scenarios verbatim into one standalone scenario file and writes the commands
  that run it (``rsio-tck run --scenarios FILE``; ``--listen`` for a client; the proxy for a grid cell);
- ``report`` gathers one finding's facts into a ``BugReport`` and renders ``templates/bug-report.md.j2``,
  laid out as the issue template of the finding's binding asks; ``terms`` is what the report says of the
  binding (its hook ``bug_report_terms``: the specification, the document cited by line, the template's
  headings), ``upstream`` where each implementation is published;
- ``cli`` is the ``report --finding`` / ``--all-findings`` half of ``rsio-tck report``.

A withdrawn entry, or one that was never a finding of its own, gets no report.  An entry that lacks a fact
a report needs, or a baseline naming a scenario the suite does not have, is a ``FindingsError``: one line
naming the file, the line and the finding.
"""
