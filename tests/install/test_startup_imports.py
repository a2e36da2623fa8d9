"""What each entry point imports (not how long it takes): help and ``import svcnb`` stay light.

Each case runs in a fresh interpreter and reports ``sys.modules`` afterwards. ``svcnb --help``,
``svcnb sandbox --help``, ``svcnb --version`` and ``svcnb`` alone load none of pandas, pyarrow,
deltalake or httpx; ``import svcnb`` loads neither the store nor the client until they are used,
and then they load.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "pyarrow", "deltalake", "httpx", "numpy")
REPORT = (
    "import json, sys; print(json.dumps(sorted(m for m in sys.modules if '.' not in m "
    "or m.startswith('svcnb.'))))"
)


def _modules_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _cli(*argv: str) -> str:
    return (
        "import contextlib, io\nfrom svcnb.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({list(argv)!r})\n"
        "    except SystemExit:\n"
        "        pass"
    )


@pytest.mark.parametrize(
    "argv",
    [("--help",), ("sandbox", "--help"), ("--version",), ()],
    ids=["help", "sandbox-help", "version", "bare"],
)
def test_help_and_version_load_no_data_or_http_stack(argv):
    loaded = _modules_after(_cli(*argv))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
    assert not {m for m in loaded if m.startswith(("svcnb.store", "svcnb.client"))}


def test_sandbox_help_loads_no_server():
    loaded = _modules_after(_cli("sandbox", "--help"))
    assert not loaded & {"uvicorn", "starlette"}, sorted(loaded & {"uvicorn", "starlette"})
    assert "svcnb.cli.sandbox" in loaded


def test_import_svcnb_loads_neither_store_nor_client_until_used():
    loaded = _modules_after("import svcnb")
    assert not loaded & {*HEAVY, "urllib3", "matplotlib", "ipywidgets", "uvicorn"}, sorted(
        loaded & {*HEAVY, "urllib3", "matplotlib", "ipywidgets", "uvicorn"}
    )
    assert not {m for m in loaded if m.startswith(("svcnb.store", "svcnb.client", "svcnb.sandbox"))}
    assert {"svcnb.errors", "svcnb.config", "svcnb.vocab"} <= loaded


def test_reports_load_matplotlib_only_to_draw():
    # `svcnb report ... --format csv` (cron, scripts) computes and prints: no plotting stack
    loaded = _modules_after(
        "import svcnb.reports, svcnb.reports.firewall\n" + _cli("report", "billing", "--help")
    )
    assert "svcnb.reports.billing" in loaded and "svcnb.cli.report" in loaded
    assert "matplotlib" not in loaded
    loaded = _modules_after("from svcnb.reports import billing; billing.plot_renewals")
    assert "matplotlib" not in loaded
    drawn = _modules_after(
        "import pandas as pd\nfrom svcnb.reports import billing\n"
        "billing.plot_balance(pd.DataFrame({'server_time': pd.to_datetime([], utc=True), "
        "'balance': pd.Series([], dtype=float), 'currency': pd.Series([], dtype=str)}))"
    )
    assert "matplotlib" in drawn


def test_what_is_used_loads():
    loaded = _modules_after("import svcnb; svcnb.Store; svcnb.connect")
    assert {"deltalake", "pyarrow", "pandas", "httpx", "svcnb.store", "svcnb.client"} <= loaded
    loaded = _modules_after("from svcnb.sandbox import serve, Control")
    assert {"uvicorn", "httpx", "svcnb.sandbox._serve"} <= loaded


def test_lazy_names_are_the_real_ones():
    import svcnb
    import svcnb.sandbox
    from svcnb._connect import connect
    from svcnb.sandbox._serve import serve
    from svcnb.store import Store, StoreError

    assert svcnb.connect is connect and svcnb.Store is Store and svcnb.StoreError is StoreError
    assert svcnb.sandbox.serve is serve
    assert set(svcnb.sandbox.__all__) <= set(dir(svcnb.sandbox))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        svcnb.sandbox.nothing  # noqa: B018
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        svcnb.nothing  # noqa: B018
