"""Status words as classes, through ``svcnb.vocab``: the only place reports read a status word.

Reports never compare raw words: a service may say ``active`` for running or ``unpaid`` for
overdue. A word the vocabulary does not know (or a missing status) is the class ``unknown``;
a report leaves such rows out of what it sums or forecasts and counts them (``unknown_status``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from svcnb import vocab

UNKNOWN = vocab.UNKNOWN
# VM classes that renew, grow bandwidth and can be billed when billing is paid
LIVE = ("running", "stopped", "transitional")
# billing classes that mean the VM owes money and does not renew until paid
OWING = ("owing", "suspended")


def _words(frame: pd.DataFrame, column: str) -> list[Any]:
    if column not in frame:
        return [None] * len(frame)
    # None, not pd.NA: a missing word is "unknown" without a warning, and NA is not comparable
    return [None if pd.isna(v) else v for v in frame[column].astype(object)]


def classes(frame: pd.DataFrame, column: str, kind: vocab.Kind) -> pd.Series:
    """The class of each word of ``frame[column]`` (a ``string`` Series on ``frame.index``)."""
    if column not in frame:
        found = vocab.current().classify_many(kind, _words(frame, column))
        return pd.Series(found, index=frame.index, dtype="string")
    # each distinct word classified once (a fleet says a handful of words, many times over)
    codes, words = pd.factorize(frame[column], use_na_sentinel=True)
    distinct = _words(pd.DataFrame({column: words}), column)
    found = vocab.current().classify_many(kind, distinct) + [UNKNOWN]  # [-1]: missing
    return pd.Series(
        pd.array(np.array(found, dtype=object)[codes], dtype="string"), index=frame.index
    )


def vm_classes(vms: pd.DataFrame) -> pd.Series:
    """Class of each VM's ``status``: running, stopped, transitional, suspended, terminated or
    unknown."""
    return classes(vms, "status", "vm_status")


def billing_classes(vms: pd.DataFrame) -> pd.Series:
    """Class of each VM's ``billing_status``: paid, owing, suspended or unknown."""
    return classes(vms, "billing_status", "billing_status")


def left_out_note(count: int) -> str:
    """The sentence a panel or the CLI shows beside a figure that left VMs out."""
    return f"{count:,} VM(s) with unknown status left out (map their words: svcnb.vocab.extend)"
