"""The reports: the benchmark report (:mod:`~neardup.report.html`, :mod:`~neardup.report.plots`) and the
views of one run, as HTML (:mod:`~neardup.report.run`) or in the terminal (:mod:`~neardup.report.terminal`).

Owns laying out; must not compute results, evidence or metrics.
"""
