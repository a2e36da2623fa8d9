"""The built-in vocabulary classes only words that mean one thing at every provider (and the
spec's own words); a word providers use for different states is unknown until pinned, in the
config file or per account."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from svcnb import vocab
from svcnb.config import accounts

# (kind, word): each used by one provider for one state and by another for another
AMBIGUOUS = [
    ("vm_status", "locked"),  # Vultr/Hetzner: held during an operation; Scaleway: suspended
    ("vm_status", "on_hold"),
    ("vm_status", "held"),
    ("vm_status", "active"),  # Vultr: installed, powered off too; DigitalOcean: running
    ("vm_status", "shutting_down"),  # Linode: stopping; AWS EC2: terminating
    ("vm_status", "blocked"),
    ("vm_status", "frozen"),
    ("billing_status", "unpaid"),  # WHMCS: an invoice not yet due; Stripe: past due
    ("billing_status", "on_hold"),
    ("billing_status", "locked"),
    ("billing_status", "blocked"),
    ("billing_status", "pending_payment"),
]


@pytest.mark.parametrize(("kind", "word"), AMBIGUOUS)
def test_a_word_providers_differ_on_is_unknown_and_the_warning_says_why(kind, word):
    with pytest.warns(vocab.UnknownWordWarning, match=f"'{word}' may mean .*providers differ"):
        assert vocab.Vocabulary().classify(kind, word) == vocab.UNKNOWN


def test_no_built_in_word_is_one_providers_differ_on():
    for kind in vocab.CLASSES:
        assert not set(vocab.BUILTIN[kind]) & set(vocab.AMBIGUOUS[kind]), kind


@pytest.mark.parametrize(
    ("word", "cls"),
    [("running", "running"), ("stopped", "stopped"), ("terminated", "terminated")],
)  # fmt: skip
def test_the_spec_s_own_words_are_fixed_points(word, cls):
    # the spec: stop "a running VM"; events vm.stopped, vm.terminated. Its vm.suspended event
    # ("for example for non-payment") does not make the status word one thing everywhere: a
    # user's suspend to disk at OpenStack is 'SUSPENDED' too, so it is unknown until pinned
    known = vocab.Vocabulary()
    assert known.classify("vm_status", word) == cls
    assert known.source("vm_status", word) == "built-in"


def _config(text: str) -> None:
    Path(os.environ["SVCNB_CONFIG"]).write_text(text)


def test_an_account_reads_its_words_with_its_own_pins():
    _config(
        '[vocabulary.vm_status]\nhalted = "stopped"\n\n'
        '[accounts.north]\nbase_url = "https://north.example.com"\ntoken_env = "SVC_NORTH"\n\n'
        '[accounts.north.vocabulary.vm_status]\nlocked = "suspended"\n\n'
        '[accounts.south]\nbase_url = "https://south.example.com"\ntoken_env = "SVC_SOUTH"\n\n'
        '[accounts.south.vocabulary.vm_status]\nlocked = "transitional"\n'
    )
    assert set(accounts()) == {"north", "south"}  # the vocabulary key is an account's own
    north, south = vocab.for_account("north"), vocab.for_account("south")
    assert north.classify("vm_status", "locked") == "suspended"
    assert south.classify("vm_status", "locked") == "transitional"
    assert "[accounts.north.vocabulary.vm_status] locked" in north.source("vm_status", "locked")
    assert south.classify("vm_status", "halted") == "stopped"  # the shared pins still hold
    with pytest.warns(vocab.UnknownWordWarning):
        assert vocab.reload().classify("vm_status", "locked") == vocab.UNKNOWN
    with vocab.using(north):
        assert vocab.vm_class("locked") == "suspended"


def test_a_pinned_word_says_where_it_was_pinned():
    _config('[vocabulary.billing_status]\non_hold = "suspended"\n')
    current = vocab.reload()
    assert current.classify("billing_status", "on_hold") == "suspended"
    assert "[vocabulary.billing_status] on_hold" in str(current.source("billing_status", "on_hold"))
    assert current.source("billing_status", "zzz") is None


def test_a_command_given_an_account_reads_with_that_account_s_pins(monkeypatch):
    from svcnb import cli
    from svcnb.cli import report

    _config(
        '[accounts.north]\nbase_url = "https://north.example.com"\ntoken_env = "SVC_NORTH"\n\n'
        '[accounts.north.vocabulary.vm_status]\nlocked = "suspended"\n'
    )
    seen: list[str] = []

    def run(args) -> int:
        seen.append(vocab.current().classify("vm_status", "locked", warn=False))
        return 0

    monkeypatch.setattr(report, "run", run)
    assert cli.main(["report", "billing", "--account", "north"]) == 0
    assert cli.main(["report", "billing"]) == 0
    assert seen == ["suspended", vocab.UNKNOWN]  # the pin is north's alone
