"""Money has one public home, ``svcnb.money``: the reader of every served form and the formatter
of every amount shown, side by side; nothing else in svcnb parses an amount of its own."""

from __future__ import annotations

import re
from decimal import Decimal

from _imports import ROOT

from svcnb import frames, money


def test_the_reader_and_the_formatter_are_found_in_one_module():
    read = money.parse_money({"amount": "1234.5", "currency": "EUR"})
    assert read.exact == Decimal("1234.5") and read.currency == "EUR"
    assert money.money_text(read.exact, read.currency) == "1,234.50 EUR"
    assert money.plain_text(read.amount, read.currency) == "1234.50"
    # the frames read money through it: the same function, not a copy
    assert frames.parse_money is money.parse_money


def test_no_second_money_parser_anywhere_in_svcnb():
    defined = re.compile(r"^def (parse_money|_amount|read_money)\(", re.M)
    found = {
        str(path.relative_to(ROOT)): defined.findall(path.read_text())
        for path in ROOT.rglob("*.py")
        if defined.search(path.read_text())
    }
    # the client's reader, and the sandbox's reader of the amounts it keeps (it writes them in
    # its dialect's form beside it, and shares no code with the client)
    assert found == {"money/_read.py": ["parse_money"], "sandbox/_speak.py": ["read_money"]}
