"""The spec leaves the unit of ram "not shown": where a plan states its size (``s-1vcpu-2gb``,
``Standard 2 GB``), a VM's ram is checked against it. Ram served in GiB (2 for 2048) is never
taken for 2 MiB: it is NA with one warning saying how to pin the unit, and a pinned unit is
converted exactly. Disk is checked only where plans state a disk size."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pandas as pd
import pytest

from svcnb import frames
from svcnb.config import ConfigError, units_config
from svcnb.frames import (
    AssumptionWarning,
    RecordError,
    UnitWarning,
    UnreadableValueWarning,
    check_units,
)

from ._samples import vm


def _plan(slug, name="Plan"):
    return {"slug": slug, "name": name, "priceMonthly": 10}


def _fleet_in_gib():
    return [
        vm(0, ram=2, plan=_plan("s-1vcpu-2gb", "Starter 2 GB")),
        vm(1, ram=4, plan=_plan("s-2vcpu-4gb")),
        vm(2, ram=8, plan=_plan("custom", "Standard 8 GB")),
        vm(3, ram=16, plan=_plan("legacy", "Legacy")),  # states nothing
    ]


def _caught(build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = build()
    return frame, [w for w in caught if issubclass(w.category, UnreadableValueWarning)]


def _pin(text: str) -> Path:
    path = Path(os.environ["SVCNB_CONFIG"])  # a file of this test's own (tests/conftest.py)
    path.write_text(text, encoding="utf-8")
    return path


def test_ram_pinned_in_mib_but_served_in_gib_is_na_with_one_warning_saying_how_to_pin_it():
    # the config file (tests/frames/conftest.py) pins ram in MiB, as the sandbox's dialect does
    frame, caught = _caught(lambda: frames.vms(_fleet_in_gib()))
    assert frame["ram_mib"].isna().all()  # never 2 MiB; the plan-less VM is in doubt too
    assert frame.attrs["unreadable"] == {"ram_mib": 4}
    assert len(caught) == 1 and {w.category for w in caught} == {UnitWarning}
    text = str(caught[0].message)
    assert "looks like GiB" in text and "'vm-00000'" in text
    assert '[units] ram = "GiB"' in text and "units={'ram': 'GiB'}" in text
    check = check_units(_fleet_in_gib())["ram"]
    assert (check.unit, check.pinned, check.seen) == ("MiB", True, "GiB")
    assert check.checked == 3 and check.agreeing == 0 and not check.ok
    assert check.disagreements == ("vm-00000", "vm-00001", "vm-00002")
    assert check.unknown == ("vm-00000", "vm-00001", "vm-00002", "vm-00003")
    assert "GiB" in check.summary() and "pinned by" in check.summary()


def test_ram_in_gib_unpinned_is_proven_by_the_plans_and_disk_no_plan_states_is_unknown():
    frame, caught = _caught(lambda: frames.vms(_fleet_in_gib(), pins={}))
    assert frame["ram_mib"].tolist() == [2048, 4096, 8192, 16384]  # never 2 MiB
    assert frame["disk_gib"].isna().all() and frame.attrs["unreadable"] == {"disk_gib": 4}
    assert len(caught) == 1 and caught[0].category is AssumptionWarning
    assert "units.disk" in str(caught[0].message)
    assert '[units] disk = "GiB"' in str(caught[0].message)
    assert frame.attrs["assumptions"]["units.ram"] == {"ram": "proven"}
    check = check_units(_fleet_in_gib(), pins={})["ram"]
    assert check.ok and check.decision is not None and check.decision.value == "GiB"
    assert "units.ram = GiB proven: 3 VM(s)" in check.summary()
    disk = check_units(_fleet_in_gib(), pins={})["disk"]
    assert not disk.ok and "assumed, not proven" in disk.summary()


def test_ram_in_mib_as_the_plans_say_is_kept_without_a_warning():
    records = [
        vm(0, ram=2048, plan=_plan("s-1vcpu-2gb", "Starter 2 GB")),
        vm(1, ram=512, plan=_plan("nano-512mb")),
        vm(2, ram=4096, plan=_plan("s-2", "Standard 4GiB")),
        vm(3, ram=3072, plan=_plan("legacy", "Legacy")),
        vm(4, ram=1990, plan=_plan("s-1vcpu-2gb")),  # within a tenth below the plan's figure
    ]
    frame, caught = _caught(lambda: frames.vms(records))
    assert frame["ram_mib"].tolist() == [2048, 512, 4096, 3072, 1990]
    assert not caught and "unreadable" not in frame.attrs
    check = check_units(records)["ram"]
    assert (check.seen, check.checked, check.agreeing, check.disagreements) == ("MiB", 4, 4, ())


def test_ram_in_bytes_or_any_unit_the_plan_contradicts_is_unknown():
    records = [
        vm(0, ram=2 * 2**30, plan=_plan("std-2gb")),  # bytes
        vm(1, ram=1000, plan=_plan("std-2gb")),  # half the plan: no unit svcnb reads
    ]
    frame, caught = _caught(lambda: frames.vms(records, pins={}))
    assert frame["ram_mib"].isna().all() and frame["disk_gib"].isna().all()
    assert "looks like mixed" not in str(caught[0].message)
    check = check_units(records, pins={})["ram"]
    assert check.disagreements == ("vm-00000", "vm-00001") and not check.ok
    assert check.seen == "bytes"


def test_one_vm_in_gib_puts_only_the_unconfirmed_vms_in_doubt():
    records = [
        vm(0, ram=2048, plan=_plan("s-1vcpu-2gb")),
        vm(1, ram=2, plan=_plan("s-1vcpu-2gb")),
        vm(2, ram=4096, plan=_plan("legacy", "Legacy")),
    ]
    frame, caught = _caught(lambda: frames.vms(records))
    assert frame["ram_mib"].tolist()[0] == 2048
    assert frame["ram_mib"].iloc[1:].isna().all()
    assert "1 other VM(s)" in str(caught[0].message)
    assert check_units(records)["ram"].seen == "GiB"


def test_a_unit_pinned_in_the_config_file_converts_exactly():
    _pin('[units]\nram = "GiB"\ndisk = "GiB"\n')
    assert units_config() == {"ram": "GiB", "disk": "GiB"}
    frame, caught = _caught(lambda: frames.vms(_fleet_in_gib()))
    assert frame["ram_mib"].tolist() == [2048, 4096, 8192, 16384]
    assert not caught and "unreadable" not in frame.attrs
    check = check_units(_fleet_in_gib())["ram"]
    assert (check.unit, check.pinned, check.seen, check.agreeing) == ("GiB", True, "GiB", 3)


def test_a_unit_pinned_in_python_converts_exactly_and_wins_over_the_config_file():
    _pin('[units]\nram = "MiB"\n')
    frame = frames.vms(_fleet_in_gib(), units={"ram": "GiB"})
    assert frame["ram_mib"].tolist() == [2048, 4096, 8192, 16384]
    assert frame["ram_mib"].dtype == "Int64"


def test_a_pinned_unit_the_plans_disagree_with_is_na_with_a_warning():
    records = [vm(0, ram=2048, plan=_plan("s-1vcpu-2gb")), vm(1, ram=3, plan=_plan("x", "X"))]
    frame, caught = _caught(lambda: frames.vms(records, units={"ram": "GiB"}))
    assert frame["ram_mib"].isna().all()
    assert len(caught) == 1 and "looks like MiB, not GiB as pinned" in str(caught[0].message)
    with pytest.raises(RecordError, match="vm-00000.*'ram'.*fits MiB, not GiB"):
        frames.vms(records, units={"ram": "GiB"}, strict=True)


def test_strict_stops_at_a_vm_whose_ram_fits_gib():
    with pytest.raises(RecordError, match=r"vm-00000.*'ram'.*fits GiB.*\[units\] ram"):
        frames.vms(_fleet_in_gib(), strict=True)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('[units]\nram = "GB"\n', "ram = 'GB' is not a pin of units.ram; use 'MiB', 'GiB'"),
        ('[units]\nbandwidth = "GiB"\n', "'bandwidth' pins nothing; the keys are ram, disk"),
        ('units = "GiB"\n', "must be a table"),
    ],
)
def test_a_pin_svcnb_cannot_read_is_an_error_naming_the_file(text, problem):
    path = _pin(text)
    with pytest.raises(ConfigError, match=problem) as raised:
        frames.vms(_fleet_in_gib())
    assert str(path) in str(raised.value)
    _pin("")
    with pytest.raises(ConfigError, match="the units argument: ram = 'GB' is not a unit"):
        frames.vms([], units={"ram": "GB"})


def test_vm_records_give_ram_back_in_the_pinned_unit_so_the_frame_rebuilds():
    frame = frames.vms(_fleet_in_gib(), units={"ram": "GiB"})
    rebuilt = frames.vm_records(frame, units={"ram": "GiB"})
    assert [r["ram"] for r in rebuilt] == [2, 4, 8, 16]
    pd.testing.assert_frame_equal(frames.vms(rebuilt, units={"ram": "GiB"}), frame)


def test_disk_is_checked_only_where_plans_state_a_disk_size():
    stated = [
        vm(0, ram=2048, disk=51200, plan=_plan("s-1vcpu-2gb-50gb-disk")),
        vm(1, ram=4096, disk=81920, plan=_plan("s-2vcpu-4gb", "4 GB RAM, 80 GB SSD")),
    ]
    frame, caught = _caught(lambda: frames.vms(stated))
    assert frame["disk_gib"].isna().all() and frame["ram_mib"].tolist() == [2048, 4096]
    assert len(caught) == 1 and "disk of 2 VM(s) looks like MiB, not GiB" in str(caught[0].message)
    assert frames.vms(stated, units={"disk": "MiB"})["disk_gib"].tolist() == [50, 80]
    # the sandbox's plans, like most, state no disk size: disk is left alone and said so
    plain = [vm(0, ram=2048, disk=7, plan=_plan("s-1vcpu-2gb"))]
    assert frames.vms(plain)["disk_gib"].tolist() == [7]
    check = check_units(plain)["disk"]
    assert (check.seen, check.checked) == (None, 0)
    assert "no plan states a disk size to check; units.disk = GiB pinned by" in check.summary()
    # a service nothing pins: disk rests on an assumption nothing proves, so it is unknown
    with pytest.warns(AssumptionWarning, match=r'units\.disk.*\[units\] disk = "GiB"'):
        unknown = frames.vms(plain, pins={})
    assert unknown["disk_gib"].isna().all() and unknown["ram_mib"].tolist() == [2048]


def test_the_fast_and_the_exact_path_agree_on_units(monkeypatch):
    records = [*_fleet_in_gib(), vm(9, ram=2048, plan=_plan("s-1vcpu-2gb"))]
    fast, fast_warned = _caught(lambda: frames.vms(records))
    monkeypatch.setattr("svcnb.frames._build.arrow_columns", lambda resource, records: {})
    exact, exact_warned = _caught(lambda: frames.vms(records))
    pd.testing.assert_frame_equal(fast, exact)
    assert fast.attrs == exact.attrs and fast["ram_mib"].notna().sum() == 1
    assert [str(w.message) for w in fast_warned] == [str(w.message) for w in exact_warned]
