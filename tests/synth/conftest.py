"""Shared texts and helpers for the neardup.synth tests."""

from __future__ import annotations

import re

from neardup.synth.presets import NoiseSpec, OpSpec


SAMPLE = """Council approves new budget for city transport

The city council on Tuesday approved a budget of 245 million pounds for public transport, \
the largest increase in more than a decade. Councillor Margaret Hughes said the money would \
pay for 40 new electric buses and longer opening hours at 12 stations.

Opposition members argued that the plan relied on optimistic forecasts. They said fares had \
risen by 7% last year and that passengers in the northern districts still waited too long. \
The transport authority expects passenger numbers to grow by 3.5% in 2025.

Work on the first routes is due to begin in March. The council will publish quarterly reports \
on spending, and an independent panel led by Professor David Osei will review the results \
after two years. Local businesses welcomed the decision, saying better connections would help \
shops in the centre recover from a difficult winter.
"""


SAMPLE2 = """Regional rail operator reports record passenger numbers

Northern Lines said on Monday that 18 million journeys were made on its trains in the last \
year, up 9% on the previous year. The operator credited new timetables and cheaper off-peak \
tickets. Chief executive Anna Berg said further improvements were planned for the coming months, \
including 15 refurbished trains and wifi on all services.
"""


WS = re.compile(r"\s+")


NUM = re.compile(r"\d+(?:[.,]\d+)*")


def _ws(s: str) -> str:
    return WS.sub(" ", s).strip()


def _spec(*ops: OpSpec, name: str = "test") -> NoiseSpec:
    return NoiseSpec(name, tuple(ops))
