"""The frames' tests read records shaped like the sandbox's default dialect, so they read them as
a client of that sandbox does: with its pins (ram MiB, disk GiB, major units) in the config
file. A test of what an unknown service's answers give passes ``pins={}`` itself."""

from __future__ import annotations

import pytest

from svcnb.config import write_section

# what the sandbox's default dialect hands over (svcnb.sandbox Dialect.pins)
SANDBOX_PINS = {"money.scale": "major", "units.ram": "MiB", "units.disk": "GiB"}


@pytest.fixture(autouse=True)
def _sandbox_pins(_clean_environment: None) -> None:
    tables: dict[str, dict[str, str]] = {}
    for name, value in SANDBOX_PINS.items():
        table, _, key = name.partition(".")
        tables.setdefault(table, {})[key] = value
    for table, values in tables.items():
        write_section(table, values)
