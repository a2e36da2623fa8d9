"""The notebooks are what users copy from: they import only svcnb's public names."""

from __future__ import annotations

import json
import re
from pathlib import Path

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# `from svcnb.x._y import`, `import svcnb.x._y`, or `svcnb.x._y.` / `svcnb._y` in code
_PRIVATE = re.compile(r"\bsvcnb(?:\.[a-z]\w*)*\._\w+")


def test_the_notebooks_import_nothing_private():
    assert len(NOTEBOOKS) == 6
    found = []
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                code = line.split("#", 1)[0]
                if _PRIVATE.search(code):
                    found.append(f"{path.name}: {line.strip()}")
    assert not found, "private svcnb names in the notebooks:\n" + "\n".join(found)
