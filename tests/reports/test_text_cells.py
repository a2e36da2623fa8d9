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


def test_a_column_of_figures_or_times_reads_as_each_cell_would_alone() -> None:
    """Grids write a column of numbers or times in one pass (10,000 VMs per slider move): every
    cell still reads as that value does alone: missing blank, -0.0 kept, whole days cut, big
    numbers short, times in UTC."""
    from svcnb.reports import display_frame, kind_text

    gib = 1024**3
    frame = pd.DataFrame(
        {
            "used_bytes": [1.5 * gib, float("nan"), -0.0, 1234567 * gib],
            "share": [0.123, float("nan"), 1.0, 0.25],
            "runway_days": pd.array([1.9, pd.NA, 10.0, 365.99], dtype="Float64"),
            "vms": pd.array([1, pd.NA, 12345, 0], dtype="Int64"),
            "age_seconds": [3.0, 2.5, float("nan"), 1e16],
            "day": pd.to_datetime(
                ["2026-11-17 23:30", None, "2026-01-01 00:00", "2025-12-31 23:59"]
            ).tz_localize("Europe/Paris"),
            "month": pd.to_datetime(
                ["2026-11-30 23:30", None, "2026-01-01 00:00", "2025-12-01 00:00"]
            ),
        }
    )
    shown = display_frame(frame)
    assert shown["Used (GiB)"].tolist() == ["1.5", "", "-0.0", "1,234,567.0"]
    assert shown[shown.columns[1]].tolist() == ["12 %", "", "100 %", "25 %"]
    assert shown[shown.columns[2]].tolist() == ["1", "", "10", "365"]
    assert shown[shown.columns[3]].tolist() == ["1", "", "12,345", "0"]
    assert shown[shown.columns[4]].tolist() == ["3.00", "2.50", "", "1e+16"]
    # a day and a month of UTC: 2026-11-17 23:30 in Paris is 22:30 UTC
    assert shown[shown.columns[5]].tolist() == ["2026-11-17", "", "2025-12-31", "2025-12-31"]
    assert shown[shown.columns[6]].tolist() == ["2026-11", "", "2026-01", "2025-12"]
    for column, label in zip(frame.columns, shown.columns, strict=True):
        kind = shown.attrs["kinds"][label]
        alone = [kind_text(kind, v) for v in frame[column].tolist()]
        assert shown[label].tolist() == alone, column
