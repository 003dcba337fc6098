"""The dataset's texts name the entry point of its own system, taken from the system (issue 20).

The card, the row schemas and Croissant describe the request series as derived from the
entry point's log; the name comes from the system's topology, so datasets/ spells no
application's service and a dataset of Online Boutique keeps its bytes.
"""

from __future__ import annotations

import pytest

from r2act.datasets import layout
from r2act.datasets.card import _VISIBLE_DOCS, entry_point
from r2act.datasets.schemas import table_schema
from r2act.systems import INSTALLED, get_system


def test_the_entry_point_is_the_systems_own_and_generic_when_unknown_or_mixed() -> None:
    for name in INSTALLED:
        assert entry_point([name, name]) == get_system(name).topology.entrypoint
    assert entry_point([]) == "entry point"
    assert entry_point(["no-such-system"]) == "entry point"
    assert entry_point([*INSTALLED, "no-such-system"]) == "entry point"


def test_every_description_has_the_entry_point_filled_in() -> None:
    for name, schema in layout.TABLES.items():
        properties = table_schema(name, schema, "web")["properties"]
        assert not any(layout.ENTRY in p["description"] for p in properties.values())
    errors = table_schema("requests", layout.REQUEST_TABLE, "web")["properties"]["errors_per_s"]
    assert "or web errors naming the called service" in errors["description"]
    assert "from the web's request log" in layout.described(_VISIBLE_DOCS[layout.REQUESTS], "web")


def test_croissant_describes_the_request_series_with_the_entry_point() -> None:
    pytest.importorskip("mlcroissant")
    from r2act.datasets.croissant import render_croissant

    document = render_croissant(
        name="t",
        description="d",
        version="0",
        date="2026-01-01",
        sha256={layout.REQUESTS: "0" * 64},
        entry="web",
    )
    (requests,) = document["distribution"]
    assert "derived from the web log" in requests["description"]
    fields = {f["name"]: f["description"] for f in document["recordSet"][0]["field"]}
    assert "or web errors naming" in fields["errors_per_s"]
