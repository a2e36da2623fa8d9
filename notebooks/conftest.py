"""nbval settings for the user-story notebooks (``pytest --nbval --nbval-current-env notebooks``).

Each notebook's kernel starts with a fresh, empty store and without the real-API variables, so
``svcnb.connect()`` starts its own seeded sandbox and every run prints the same figures.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

try:
    from nbval.plugin import IPyNbFile
except ImportError:  # nbval not installed: the notebooks are simply not collected as tests
    IPyNbFile = None

# Variables that would point a kernel at the real service or at a shared sandbox or store.
_KERNEL_ENV_DROPPED = ("SVC_API_KEY", "SVC_BASE_URL", "SVCNB_SANDBOX")


def pytest_collectstart(collector: pytest.Collector) -> None:
    # pandas' text/html differs between versions in whitespace alone; the cells that matter
    # print their figures as plain text, which is compared.
    if IPyNbFile is not None and isinstance(collector, IPyNbFile):
        collector.skip_compare = (*collector.skip_compare, "text/html")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    notebook = item.parent
    starts_kernel = (
        IPyNbFile is not None
        and isinstance(notebook, IPyNbFile)
        and getattr(notebook, "kernel", None) is None
    )
    if not starts_kernel:
        return (yield)
    # The kernel copies os.environ when it starts (during this setup); set it just for that.
    saved = dict(os.environ)
    try:
        for name in _KERNEL_ENV_DROPPED:
            os.environ.pop(name, None)
        store = item.config._tmp_path_factory.mktemp(f"store-{notebook.fspath.purebasename}")
        os.environ["SVCNB_STORE"] = str(store)
        os.environ.setdefault("MPLBACKEND", "module://matplotlib_inline.backend_inline")
        return (yield)
    finally:
        os.environ.clear()
        os.environ.update(saved)
