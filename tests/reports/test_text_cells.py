"""Cells a notebook prints through ``text_table``: a missing value says what is missing (the
caller names it), a record of fields (a rule's before and after) reads as "name: value", a
code reads as its words; never pandas' ``<NA>`` or Python's ``{'...'}``."""

from __future__ import annotations

import pandas as pd

from svcnb.reports import text_table


def test_a_missing_cell_is_named_and_a_record_reads_as_its_fields() -> None:
    frame = pd.DataFrame(
        {
            "finding": ["unseen_change", "missing_event"],
            "before": pd.array([pd.NA, "running"], dtype="string"),
            "after": [{"description": "SSH", "sourceIps": ["10.0.0.0/8", "192.0.2.1"]}, "up"],
        }
    )
    text = text_table(frame, missing="not seen")
    assert "Event for no change seen" in text and "No event for a change" in text
    assert "not seen" in text
    assert "description: SSH; sourceIps: 10.0.0.0/8, 192.0.2.1" in text
    assert "<NA>" not in text and "{'" not in text
    # by default a missing cell stays blank, as the CLI prints it
    assert "not seen" not in text_table(frame)


def test_a_table_in_a_notebook_cell_is_html_with_the_text_table_as_its_plain_text() -> None:
    from svcnb.reports import table

    frame = pd.DataFrame(
        {
            "name": ["web-1"],
            "amount": [119.0],
            "currency": ["EUR"],
            "before": pd.array([pd.NA], dtype="string"),
        }
    )
    shown = table(frame, missing="unknown")
    page = shown._repr_html_()
    assert '<table class="svcnb-table">' in page and 'class="dataframe' not in page
    assert '<td class="svcnb-num">119.00 EUR</td>' in page
    assert ">unknown</td>" in page
    assert repr(shown) == text_table(frame, missing="unknown")


def test_a_list_of_words_under_a_count_name_is_text_not_a_figure() -> None:
    from svcnb.reports import display_frame
    from svcnb.reports.static import column_looks

    # "events" counts events in the health table; the disabled table lists the types wanted
    listed = display_frame(pd.DataFrame({"events": ["vm.created, vm.started, vm.stopped"]}))
    counted = display_frame(pd.DataFrame({"events": [1234]}))
    assert column_looks(listed) != ["figure"]
    assert column_looks(counted) == ["figure"]
