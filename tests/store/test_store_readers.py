"""'The fleet as of a date' read without svcnb, by DuckDB (delta extension from its wheel) and
Polars, equals ``Store.load(at=)`` at every day and between days."""

from __future__ import annotations

import pandas as pd
import pytest

from svcnb.frames import KEYS

from . import readers
from .test_store_disk import DAY, T0


def _times():
    return [T0 + day * DAY + offset for day in range(5) for offset in (pd.Timedelta(0), DAY / 2)]


@pytest.mark.parametrize("resource", ["vms", "firewall_rules", "vm_ssh_keys", "wallet"])
def test_duckdb_reads_the_fleet_as_of_a_date(history, resource):
    pytest.importorskip("duckdb_extension_delta")
    store, _, _ = history
    for at in _times():
        got = readers.duckdb_as_of(str(store.path / resource), at.isoformat(), KEYS[resource])
        want = store.load(resource, at=at)
        keys = list(KEYS[resource])
        assert got[keys].values.tolist() == want[keys].astype(object).values.tolist()
        assert list(got.columns) == list(want.columns)


@pytest.mark.parametrize("resource", ["vms", "firewall_rules", "vm_ssh_keys", "wallet"])
def test_polars_reads_the_fleet_as_of_a_date(history, resource):
    store, _, _ = history
    for at in _times():
        got = readers.polars_as_of(str(store.path), resource, at, keys=KEYS[resource])
        want = store.load(resource, at=at)
        pd.testing.assert_frame_equal(
            got.to_pandas(), want, check_dtype=False, check_index_type=False
        )


def test_duckdb_values_equal_the_store(history):
    store, _, _ = history
    at = T0 + 3 * DAY
    got = readers.duckdb_as_of(str(store.path / "vms"), at.isoformat())
    want = store.load("vms", at=at)
    assert got["bandwidth_used_bytes"].tolist() == want["bandwidth_used_bytes"].tolist()
    assert got["name"].tolist() == want["name"].tolist()
    assert (got["updated_at"] == want["updated_at"]).all()
