"""svcnb.frames: columns and dtypes from the schema tables, parsing, errors, round trips."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pandas as pd
import pytest
from _fuzz import fuzz
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from svcnb import frames
from svcnb.errors import SvcnbError
from svcnb.frames import KEYS, SCHEMAS, RecordError, UnreadableValueWarning, parse_money

from ._samples import account, rule, vm

# frame name -> records that build it, from one sample account
_ACCOUNT = account()
_INPUTS = {
    "vms": _ACCOUNT["vms"],
    "vm_ssh_keys": _ACCOUNT["vms"],
    "vm_firewalls": _ACCOUNT["vms"],
    "vm_private_networks": _ACCOUNT["vms"],
    **{name: _ACCOUNT[name] for name in SCHEMAS if name in _ACCOUNT and not name.startswith("vm")},
}


def _build(name, records):
    return getattr(frames, name)(records)


def _expected_dtypes(name):
    return pd.Series({c: pd.api.types.pandas_dtype(f.dtype) for c, f in SCHEMAS[name].items()})


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_columns_and_dtypes_follow_the_schema_table(name):
    frame = _build(name, _INPUTS[name])
    assert list(frame.columns) == list(SCHEMAS[name])
    assert frame.dtypes.to_dict() == _expected_dtypes(name).to_dict()
    assert len(frame) > 0
    assert not frame.duplicated(list(KEYS[name])).any()


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_empty_input_gives_empty_frame_with_the_same_columns_and_dtypes(name):
    frame = _build(name, [])
    assert frame.empty
    assert list(frame.columns) == list(SCHEMAS[name])
    assert frame.dtypes.to_dict() == _expected_dtypes(name).to_dict()
    assert frames.empty(name).dtypes.to_dict() == frame.dtypes.to_dict()


def test_every_schema_dtype_is_one_of_the_contract_dtypes():
    allowed = {"string", "Int64", "Float64", "boolean", "datetime64[ns, UTC]", "object"}
    for name, schema in SCHEMAS.items():
        for column, (path, dtype) in schema.items():
            assert dtype in allowed, (name, column)
            assert column == column.lower() and " " not in column
            assert path


def test_vm_is_flattened_with_units_in_the_names():
    row = frames.vms([vm(3)]).iloc[0]
    assert row["region_slug"] == "fra1" and row["region_name"] == "Frankfurt 1"
    assert row["plan_slug"] == "s-2" and row["os_version"] == "12"
    assert row["ram_mib"] == 4096 and row["disk_gib"] == 80 and row["network_speed_mbps"] == 1000
    assert row["billing_status"] == "active"
    assert row["bandwidth_pack_bytes"] == 2_147_483_648_000
    assert row["next_renewal_at"] == pd.Timestamp("2026-12-01T00:00:00Z")
    assert str(frames.vms([vm(3)])["updated_at"].dt.tz) == "UTC"


@pytest.mark.parametrize(
    ("price", "amount", "currency"),
    [
        (12.5, 12.5, None),
        ("12.50", 12.5, None),
        ({"amount": "12.50", "currency": "EUR"}, 12.5, "EUR"),
        ({"amount": 7, "currency": "USD"}, 7.0, "USD"),
        (0, 0.0, None),
    ],
)
def test_price_is_parsed_from_all_three_forms_and_the_raw_value_kept(price, amount, currency):
    record = vm(1, billing={"priceMonthly": price, "nextRenewalAt": None, "status": "active"})
    row = frames.vms([record]).iloc[0]
    assert row["price_monthly_amount"] == amount
    assert (
        (row["price_monthly_currency"] is pd.NA)
        if currency is None
        else (row["price_monthly_currency"] == currency)
    )
    assert parse_money(price, "major").amount == amount
    assert (
        frames.vms(frames.vm_records(frames.vms([record])))["price_monthly_raw"].iloc[0]
        == (row["price_monthly_raw"])
    )


def test_price_falls_back_to_the_plan_when_billing_has_none():
    record = vm(1, billing={"nextRenewalAt": None, "status": "overdue"})
    record["plan"]["priceMonthly"] = "9.99"
    row = frames.vms([record]).iloc[0]
    assert row["price_monthly_amount"] == 9.99
    assert row["price_monthly_raw"] == '"9.99"'


def test_null_nested_objects_give_na_not_errors():
    row = frames.vms([vm(1, region=None, plan=None, osTemplate=None, billing=None)]).iloc[0]
    for column in ("region_slug", "plan_name", "os_slug", "billing_status", "price_monthly_raw"):
        assert row[column] is pd.NA
    assert row["next_renewal_at"] is pd.NaT


def test_unknown_status_values_are_kept():
    frame = frames.vms([vm(1, status="hibernating"), vm(2, billing={"status": "grace"})])
    assert frame["status"].tolist() == ["hibernating", "running"]
    assert frame["billing_status"].iloc[1] == "grace"


def test_whole_float_counts_are_accepted_as_integers():
    frame = frames.vms([vm(1, bandwidthUsedBytes=1.5e9)])
    assert frame["bandwidth_used_bytes"].iloc[0] == 1_500_000_000


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("vcpu", "4"),
        ("vcpu", True),
        ("vcpu", 2.5),
        ("name", 5),
        ("isProtected", 1),
        ("region", "fra1"),
        ("updatedAt", "yesterday"),
        ("createdAt", "2263-01-01T00:00:00Z"),
        ("bandwidthPackBytes", "2 TB"),
        ("billing", {"priceMonthly": "twelve", "nextRenewalAt": None, "status": "active"}),
        ("billing", {"priceMonthly": True, "nextRenewalAt": None, "status": "active"}),
    ],
)
def test_a_value_of_the_wrong_type_names_resource_id_and_field(field, value):
    with pytest.raises(RecordError) as info:
        frames.vms([vm(0), vm(7, **{field: value})], strict=True)
    message = str(info.value)
    assert "vms" in message and "vm-00007" in message and field in message
    assert info.value.record_id == "vm-00007" and info.value.field.startswith(field)
    assert isinstance(info.value, SvcnbError)


@pytest.mark.parametrize(
    ("field", "value", "columns"),
    [
        ("vcpu", "4", ["vcpu"]),
        ("vcpu", True, ["vcpu"]),
        ("vcpu", 2.5, ["vcpu"]),
        ("name", 5, ["name"]),
        ("isProtected", 1, ["is_protected"]),
        ("region", "fra1", ["region_slug", "region_name"]),
        ("updatedAt", "yesterday", ["updated_at"]),
        ("createdAt", "2263-01-01T00:00:00Z", ["created_at"]),
        ("bandwidthPackBytes", "2 TB", ["bandwidth_pack_bytes"]),
        (
            "billing",
            {"priceMonthly": "twelve", "nextRenewalAt": None, "status": "active"},
            ["price_monthly_amount"],
        ),
    ],
)
def test_by_default_an_unreadable_value_is_na_counted_and_warned_once(field, value, columns):
    with pytest.warns(UnreadableValueWarning) as caught:
        frame = frames.vms([vm(0), vm(7, **{field: value}), vm(8)])
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "vms" in message and "vm-00007" in message and field in message
    assert all(f"{c}: 1" in message for c in columns)
    assert frame.attrs["unreadable"] == dict.fromkeys(columns, 1)
    for column in columns:
        assert frame[column].isna().tolist() == [False, True, False]
    # the rest of the record and the other records are read as ever
    clean = frames.vms([vm(0), vm(8)])
    pd.testing.assert_frame_equal(frame.drop(index=1).reset_index(drop=True), clean)
    assert frame["id"].iloc[1] == "vm-00007"


def test_a_clean_frame_says_nothing_and_has_no_unreadable_attrs(recwarn):
    frame = frames.vms([vm(i) for i in range(5)])
    assert "unreadable" not in frame.attrs
    assert not [w for w in recwarn if issubclass(w.category, UnreadableValueWarning)]


def test_wrong_types_in_other_frames_are_named_too():
    with pytest.raises(RecordError, match=r"firewall_rules record 'rule-2', field 'sourceIps'"):
        frames.firewall_rules([rule(1), rule(2, sourceIps="10.0.0.0/8")], strict=True)
    with pytest.raises(RecordError, match=r"vm_ssh_keys record 'vm-00001/k', field 'fingerprint'"):
        frames.vm_ssh_keys(
            [vm(1, sshKeys=[{"id": "k", "name": "n", "fingerprint": 3}])], strict=True
        )
    with pytest.raises(RecordError, match="expected an object"):
        frames.vms([vm(1), "not a record"], strict=True)


def test_other_frames_keep_their_readable_rows_and_count_the_rest():
    with pytest.warns(UnreadableValueWarning, match=r"firewall_rules.*source_ips: 1.*'rule-2'"):
        rules = frames.firewall_rules([rule(1), rule(2, sourceIps="10.0.0.0/8")])
    assert rules["source_ips"].iloc[0] == ["10.0.0.0/8"] and rules["source_ips"].iloc[1] is None
    assert rules.attrs["unreadable"] == {"source_ips": 1}
    with pytest.warns(UnreadableValueWarning, match=r"vm_ssh_keys.*'vm-00001/k'"):
        keys = frames.vm_ssh_keys([vm(1, sshKeys=[{"id": "k", "name": "n", "fingerprint": 3}])])
    assert keys["ssh_key_id"].tolist() == ["k"] and keys["fingerprint"].isna().all()
    with pytest.warns(UnreadableValueWarning, match="not objects"):
        both = frames.vms([vm(1), "not a record"])
    assert both["id"].tolist() == ["vm-00001"]
    assert both.attrs["unreadable"] == {"<record>": 1}
    with pytest.warns(UnreadableValueWarning, match="vm_firewalls"):
        links = frames.vm_firewalls([vm(1, firewalls="fw-1"), vm(2), 7])
    assert links["vm_id"].tolist() == ["vm-00002"]
    assert links.attrs["unreadable"] == {"<record>": 2}


def test_odd_rule_values_are_kept_for_the_audit_to_judge():
    frame = frames.firewall_rules([rule(1, port="ssh", sourceIps=["10.0.0.300"])])
    assert frame["port"].iloc[0] == "ssh"
    assert frame["source_ips"].iloc[0] == ["10.0.0.300"]
    assert frames.firewall_rules([rule(2)])["source_ips"].iloc[0] == []


def test_link_frames_list_each_vm_item_and_skip_summaries():
    summary = {
        k: v for k, v in vm(5).items() if k not in ("sshKeys", "firewalls", "privateNetworks")
    }
    keys = frames.vm_ssh_keys([vm(1), summary])
    assert keys[["vm_id", "ssh_key_id"]].values.tolist() == [["vm-00001", "key-1"]]
    assert frames.vm_private_networks([vm(0)])["network_id"].tolist() == ["net-1"]
    assert frames.vm_private_networks([vm(1)]).empty


def test_webhook_secret_never_becomes_a_column():
    hook = {**_ACCOUNT["webhooks"][0], "secret": "whsec_do_not_keep"}
    frame = frames.webhooks([hook])
    assert "secret" not in frame.columns
    assert "whsec_do_not_keep" not in frame.to_csv()


def test_deliveries_take_the_webhook_id_when_listed_under_one():
    record = {k: v for k, v in _ACCOUNT["deliveries"][0].items() if k != "webhookId"}
    frame = frames.deliveries([record], webhook_id="wh-9")
    assert frame["webhook_id"].iloc[0] == "wh-9"
    assert frame["status_code"].iloc[0] is pd.NA


def test_wallet_accepts_the_single_object_get_wallet_returns():
    frame = frames.wallet(_ACCOUNT["wallet"][0])
    assert frame["balance_amount"].iloc[0] == 150.0
    assert frame["balance_currency"].iloc[0] == "EUR"


def test_vm_records_rebuild_the_frames_they_came_from():
    records = [vm(i) for i in range(9)] + [vm(20, region=None, billing=None, ipAddress=None)]
    vms = frames.vms(records)
    links = [frames.vm_ssh_keys(records), frames.vm_firewalls(records)]
    links.append(frames.vm_private_networks(records))
    rebuilt = frames.vm_records(vms, *links)
    pd.testing.assert_frame_equal(frames.vms(rebuilt), vms)
    pd.testing.assert_frame_equal(frames.vm_ssh_keys(rebuilt), links[0])
    pd.testing.assert_frame_equal(frames.vm_firewalls(rebuilt), links[1])
    pd.testing.assert_frame_equal(frames.vm_private_networks(rebuilt), links[2])
    # shaped like GET /vms/{id}: the same keys, nested objects and link lists
    assert set(rebuilt[0]) == set(records[0])
    assert rebuilt[0]["bandwidthPackBytes"] == records[0]["bandwidthPackBytes"]
    assert rebuilt[0]["updatedAt"] == records[0]["updatedAt"]
    assert rebuilt[-1]["region"] is None and rebuilt[-1]["billing"] is None
    assert rebuilt[1]["privateNetworks"] == []


def test_a_large_fleet_is_built_in_one_pass_with_the_same_result_as_small_batches():
    records = [vm(i, vcpu=1 + i % 8) for i in range(3000)]
    whole = frames.vms(records)
    parts = pd.concat([frames.vms(records[:1000]), frames.vms(records[1000:])], ignore_index=True)
    pd.testing.assert_frame_equal(whole, parts)
    assert whole["vcpu"].sum() == sum(1 + i % 8 for i in range(3000))


_NULLABLE = st.one_of(st.none(), st.integers(min_value=0, max_value=2**40))


@fuzz(40, HealthCheck.function_scoped_fixture)
@given(
    rows=st.lists(
        st.fixed_dictionaries(
            {
                "vcpu": _NULLABLE,
                "bandwidthUsedBytes": _NULLABLE,
                "name": st.one_of(st.none(), st.text(max_size=8)),
                "isProtected": st.one_of(st.none(), st.booleans()),
                "region": st.one_of(
                    st.none(),
                    st.fixed_dictionaries({"slug": st.text(max_size=4), "name": st.just("R")}),
                ),
                "updatedAt": st.one_of(
                    st.none(),
                    st.datetimes(
                        min_value=datetime(1900, 1, 1),
                        max_value=datetime(2200, 1, 1),
                        timezones=st.just(UTC),
                    ).map(lambda t: t.isoformat()),
                ),
            }
        ),
        max_size=8,
    )
)
def test_the_fast_path_and_the_exact_path_build_the_same_frame(monkeypatch, rows):
    records = [vm(i, **row) for i, row in enumerate(rows)]
    fast = frames.vms(records)
    with monkeypatch.context() as m:
        m.setattr("svcnb.frames._build.arrow_columns", lambda resource, records: {})
        exact = frames.vms(records)
    pd.testing.assert_frame_equal(fast, exact)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[deliveries]\nrecords = "batch"\n', "use 'event', 'attempt'"),
        ('[deliveries]\nhistroy = "full"\n', "'histroy' pins nothing"),
        ('[deliveries.fields]\ntryCount = "tries"\n', "is not a pin of deliveries.fields"),
    ],
)
def test_a_delivery_pin_svcnb_cannot_use_is_refused_naming_the_choices(
    tmp_path, monkeypatch, text, said
):
    from svcnb.config import ConfigError

    config = tmp_path / "config.toml"
    config.write_text(text)
    monkeypatch.setenv("SVCNB_CONFIG", str(config))
    with pytest.raises(ConfigError, match=re.escape(said)):
        frames.deliveries([{"id": "d1", "eventId": "e1", "success": True}])
