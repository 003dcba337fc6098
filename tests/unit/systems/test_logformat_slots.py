"""Templates filled by joining their constant texts give the text ``%`` gives.

The hot renderers split a template once (``split_slots``) and join its constant texts
around the values, instead of ``%``-formatting it per line; these tests hold the two to
the same bytes, escaped ``%%`` included, and the UUID texts to the standard's layout.
"""

from __future__ import annotations

import random
import uuid

import pytest

from r2act.systems.logformats import (
    go_line,
    iso_millis,
    java_line,
    pino_line,
    python_line,
    rfc3339nano,
    split_slots,
    uuid_text,
)
from r2act.systems.onlineboutique.render_backend import _FILLERS

TS = 1_767_225_608.140379


def test_split_slots_unescapes_percent_and_keeps_slot_order() -> None:
    template = "a%%b %s c%dd%r%%"
    parts = split_slots(template)
    assert parts == ["a%b ", " c", "d", "%"]
    values = ("x", 7, 0.5)
    joined = f"{parts[0]}{values[0]}{parts[1]}{values[1]}{parts[2]}{values[2]!r}{parts[3]}"
    assert joined == template % values


@pytest.mark.parametrize("template", ["%(name)s", "%09d", "%x", "tail %", "ok %% then %"])
def test_split_slots_refuses_what_it_cannot_join(template: str) -> None:
    with pytest.raises(ValueError):
        split_slots(template)


@pytest.mark.parametrize(
    ("style", "template"),
    [
        ("go", go_line("info", "100% done")),
        ("pino", pino_line("info", "currency-1", "currencyservice-server", "50% off")),
        ("python", python_line("INFO", "emailservice-server", "a % sign")),
        ("java", java_line("INFO", "ads at 5%", "hipstershop.AdService")),
        ("plain", "no slot at all, 100%% literal"),
    ],
)
def test_backend_fillers_write_what_percent_formatting_writes(style: str, template: str) -> None:
    sec = int(TS)
    expected = {
        "go": lambda: template % rfc3339nano(TS),
        "pino": lambda: template % int(TS * 1000),
        "python": lambda: template % (TS,),
        "java": lambda: template % (sec, int((TS - sec) * 1e9), iso_millis(TS)),
        "plain": lambda: template,
    }[style]()
    assert _FILLERS[style](template)(TS) == expected


def test_uuid_text_is_the_standard_version_4_uuid_of_the_drawn_bits() -> None:
    for seed in range(200):
        drawn = random.Random(seed).getrandbits(128)
        text = uuid_text(random.Random(seed))
        assert text == str(uuid.UUID(int=drawn, version=4))
        assert text[14] == "4" and text[19] in "89ab"
