"""After ``import svcnb`` alone, every subpackage is an attribute and every name of every
package's ``__all__`` resolves (through the lazy tables of ``svcnb`` and ``svcnb.sandbox``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import svcnb

PACKAGES = sorted(
    p.parent.name for p in Path(svcnb.__file__).parent.glob("*/__init__.py") if p.parent.name
)

# run in a fresh interpreter: here other tests may have imported the subpackages already, which
# sets them as attributes of svcnb whatever its lazy table says
PROBE = """
import json, sys
import svcnb
missing = []
for name in sorted({*svcnb.__all__, *json.loads(sys.argv[1])}):
    try:
        value = getattr(svcnb, name)
    except AttributeError as exc:
        missing.append(f"svcnb.{name}: {exc}")
        continue
    for inner in getattr(value, "__all__", ()) if name in json.loads(sys.argv[1]) else ():
        try:
            getattr(value, inner)
        except AttributeError as exc:
            missing.append(f"svcnb.{name}.{inner}: {exc}")
print(json.dumps(missing))
"""


def test_every_subpackage_is_found():
    assert {"alerts", "client", "frames", "panels", "plans", "reports", "sandbox"} <= set(PACKAGES)
    assert {"store", "webhooks"} <= set(PACKAGES)


def test_every_public_name_resolves_after_import_svcnb():
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps([*PACKAGES, "money"])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    missing = json.loads(done.stdout.strip().splitlines()[-1])
    assert not missing, "\n".join(missing)


def test_dir_lists_every_subpackage():
    assert set(PACKAGES) <= set(dir(svcnb))
