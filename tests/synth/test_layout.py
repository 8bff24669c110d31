"""Tests for neardup.synth.layout: headline, dateline, byline and footer (through the web-aggregator preset)."""

from __future__ import annotations

import re

from neardup.synth.presets import apply_noise

from .conftest import SAMPLE


def test_web_aggregator_adds_headers_and_keeps_body() -> None:
    seen: set[str] = set()
    for s in range(30):
        res = apply_noise(SAMPLE, "web-aggregator", s, str(s))
        seen.update(o.split(":")[0] for o in res.ops)
        if "add_dateline" in res.ops:
            assert re.search(r"[A-Z]{3,}[^\n]*(\(\w+\) [-\u2014]|/\w+/ -) ", res.text)
        if "add_byline" in res.ops:
            assert re.search(r"^By [A-Z]", res.text, re.M)
    assert {"abridge", "drop_lead", "add_dateline", "add_byline", "add_headline", "add_boilerplate"} <= seen
