"""``svcnb demo``: simulate an account on the sandbox, then render the report notebooks to HTML
(README, "Two commands").

The sandbox's clock is frozen, so only the simulation moves it. The simulated customer
(:class:`Customer`) tops up sensibly except once, late, so the history holds a slip to find. The
notebooks rendered are those of the working folder, as the user may have changed them; every
page written is checked for the sandbox's tokens before the command reports success.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from svcnb import files as _files
from svcnb.extras import lab_needed

if TYPE_CHECKING:
    from svcnb import Client
    from svcnb.sandbox import Control

# The notebooks rendered, in reading order. 02 stops VMs (through a plan, after rehearsing it on
# a copy): it comes last, so what it stops on the demo's sandbox changes no other page.
REPORT_NOTEBOOKS = (
    "01_inventory",
    "03_firewall_audit",
    "04_billing_review",
    "05_bandwidth_report",
    "06_webhooks",
    "02_stop_vms",
)
DEFAULT_DAYS = 90
DEFAULT_VMS = 40
DEFAULT_SEED = 7
# The simulated customer (``Customer``): each morning at PAY_HOUR UTC, when the wallet would not
# cover the next COVER_DAYS of renewals and debts, a top-up for REFILL_DAYS; top-up number
# LATE_TOPUP comes late (a slip finance can find in the history).
PAY_HOUR = 9
COVER_DAYS = 30
REFILL_DAYS = 60
LATE_TOPUP = 2
# Requests per minute per token in the demo's sandbox. 90 daily snapshots are a few thousand
# requests; at the real limit (600/min) the client would rightly pace them over minutes.
DEMO_RATE_LIMIT = 100_000
# Widget views need a live kernel (or a CDN script); an offline report keeps their text only
# when it is more than a widget's repr, so these are dropped from the HTML.
_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_CELL_TIMEOUT = 600
# Tags that load anything from the network (nbconvert's template loads require.js and MathJax
# from CDNs, mermaid by an inline module import); a page meant to be mailed must open offline and
# call nowhere, and its tables and PNGs need no script.
_REMOTE_TAGS = re.compile(
    r"<script\b[^>]*\bsrc=[\"']?(?:https?:)?//[^>]*>.*?</script>"
    r"|<script\b[^>]*>(?:(?!</script>).)*?https?://(?:(?!</script>).)*?</script>"
    r"|<link\b[^>]*\bhref=[\"']?(?:https?:)?//[^>]*>",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True)
class Morning:
    """What the customer saw one morning: the balance, how many VMs owed a renewal (overdue)
    and how many were suspended for non-payment, whether the wallet fell short, and the top-up
    she made (None: none; ``late``: the one that came late)."""

    at: datetime
    balance: Decimal
    currency: str | None
    overdue: int
    suspended: int
    short: bool = False
    topup: Decimal | None = None
    late: bool = False


class Customer:
    """How the demo's simulated customer keeps the wallet, between the daily snapshots.

    Every morning at :data:`PAY_HOUR` UTC she asks svcnb what the next ``cover_days`` need
    (``whatif.topup_needed``: what is owed, then every renewal due); when the balance falls short,
    or anything is owed (the service takes a debt from a top-up only), she tops up enough for
    ``refill_days``, through the sandbox's control (the API has no top-up).
    Once, top-up number ``late`` comes late: the card on file has expired and nobody notices
    until a VM is suspended for non-payment; she pays the first morning she sees one. So the
    history holds a sensible account with one slip that finance can find: a dip in the balance,
    renewals gone overdue, a few VMs suspended for a day or two, then paid and back.
    ``mornings`` keeps what she saw and did each morning.
    """

    def __init__(
        self,
        client: Client,
        control: Control,
        *,
        cover_days: int = COVER_DAYS,
        refill_days: int = REFILL_DAYS,
        late: int = LATE_TOPUP,
    ) -> None:
        self.client = client
        self.control = control
        self.cover_days = cover_days
        self.refill_days = refill_days
        self.late = late
        self.mornings: list[Morning] = []
        self._short_since: Morning | None = None  # the first morning the wallet fell short

    @property
    def topups(self) -> list[Morning]:
        """The mornings she topped up, in order."""
        return [m for m in self.mornings if m.topup is not None]

    def advance(self, seconds: float) -> datetime:
        """Move the sandbox clock on by ``seconds``, stopping at each morning on the way."""
        now = self.control.now()
        end = now + timedelta(seconds=seconds)
        while True:
            morning = now.replace(hour=PAY_HOUR, minute=0, second=0, microsecond=0)
            if morning <= now:
                morning += timedelta(days=1)
            if morning > end:
                break
            now = self.control.advance((morning - now).total_seconds())
            self.morning(now)
        return self.control.advance((end - now).total_seconds())

    def morning(self, now: datetime) -> Morning:
        """Look at the wallet at ``now`` and top up if it falls short (see the class)."""
        from svcnb import frames, vocab
        from svcnb.reports import whatif

        vms = frames.vms(self.client.vms.list(), pins=self.client.pins)
        wallet = frames.wallet([self.client.wallet.get()], pins=self.client.pins)
        need = whatif.topup_needed(
            vms, wallet, now=now, horizons=(self.cover_days, self.refill_days)
        ).set_index("horizon_days")
        cover, refill = need.loc[self.cover_days], need.loc[self.refill_days]
        billing = vms["billing_status"].map(vocab.billing_class)
        seen = Morning(
            now,
            cover["balance"],
            cover["currency"],
            int((billing == "owing").sum()),
            int((billing == "suspended").sum()),
        )
        # something owed is paid at once too (the service takes a debt only from a top-up)
        if cover["topup"] <= 0 and cover["owed"] <= 0:
            self._short_since = None
        else:
            seen = replace(seen, short=True)
            self._short_since = self._short_since or seen
            late = len(self.topups) + 1 == self.late
            if not late or seen.suspended > self._short_since.suspended:
                amount = max(refill["topup"], cover["owed"])
                self.control.topup(f"{amount:.2f}")
                seen = replace(seen, topup=amount, late=late)
                self._short_since = None
        self.mornings.append(seen)
        return seen

    def story(self) -> list[str]:
        """What the customer did, in a few lines for the demo's output."""
        from svcnb.money import money_text

        lines = [
            f"the simulated customer tops up each morning the wallet would not cover the next "
            f"{self.cover_days} days (or something is owed), enough for {self.refill_days} days"
        ]
        for number, m in enumerate(self.topups, start=1):
            line = f"top-up {number}: {m.at:%Y-%m-%d %H:%M} UTC, {money_text(m.topup, m.currency)}"
            if m.late:
                waited = self.waited(m)
                line += (
                    f", late: the wallet fell short on {waited[0].at:%Y-%m-%d} and nobody paid "
                    f"until a VM was suspended ({(m.at - waited[0].at).days} days; up to "
                    f"{max(w.overdue + w.suspended for w in waited)} VMs unpaid, "
                    f"{max(w.suspended for w in waited)} suspended)"
                )
            lines.append(line)
        if self.mornings:
            m = self.mornings[-1]
            lines.append(
                f"last morning ({m.at:%Y-%m-%d}): balance {money_text(m.balance, m.currency)}, "
                f"{m.overdue} VMs overdue, {m.suspended} suspended for non-payment"
            )
        return lines

    def waited(self, topup: Morning) -> list[Morning]:
        """The mornings the wallet was short before ``topup`` paid, ``topup``'s own last."""
        run = [topup]
        for m in reversed([m for m in self.mornings if m.at < topup.at]):
            if not m.short or m.topup is not None:
                break
            run.insert(0, m)
        return run


def fleet_summary(client: Client) -> list[str]:
    """A few lines on the fleet and the wallet, read through the API (``GET /vms``, ``/wallet``).

    The figures come from the reports that own them (``billing.monthly_total``,
    ``bandwidth.fleet_now``), so they are the numbers the notebooks, panels and ``svcnb report``
    show for the same fleet.
    """
    from svcnb import frames
    from svcnb.money import money_text
    from svcnb.reports import bandwidth, billing

    vms = frames.vms(client.vms.list(), pins=client.pins)
    wallet = frames.wallet([client.wallet.get()], pins=client.pins)
    now = client.server_time

    def counts(column: str) -> str:
        tally = vms[column].fillna("unknown").value_counts().sort_index()
        return ", ".join(f"{name} {n}" for name, n in tally.items())

    total = billing.monthly_total(vms, wallet, now=now)
    runway = billing.runway(vms, wallet, now=now).iloc[0]
    fleet = bandwidth.fleet_now(vms, now=now).iloc[0]
    rate = ", ".join(
        money_text(r.monthly_amount, r.currency)
        + (f" (+{r.unpriced} VMs without a price)" if r.unpriced else "")
        for r in total.itertuples()
    )
    return [
        f"fleet: {len(vms)} VMs; by status: {counts('status')}",
        f"by region: {counts('region_slug')}",
        f"monthly run rate: {rate or 'none'} over {int(total['vms'].sum())} VMs not terminated",
        f"wallet balance: {money_text(runway['balance'], runway['currency'])}; "
        f"owed: {_owed(runway, money_text(runway['owed'], runway['currency']))}",
        f"bandwidth this cycle: {_gib(fleet, 'used')} of {_gib(fleet, 'pack')} in packs"
        + (
            f" ({left} VMs of unknown status left out)"
            if (left := int(fleet["unknown_status"]))
            else ""
        ),
    ]


def _owed(runway: Any, amount: str) -> str:
    """What the runway says is owed, as far as it knows it (``owed_bound``)."""
    bound = runway["owed_bound"]
    if bound == "unknown":
        return "unknown"
    return f"at least {amount}" if bound == "at least" else amount


def _gib(fleet: Any, what: str) -> str:
    """A fleet sum of :func:`~svcnb.reports.bandwidth.fleet_now` in GiB, "at least" when VMs
    were left out or not read, as the bandwidth view writes it."""
    from svcnb.reports import bandwidth

    bound = "" if fleet[f"{what}_bytes_bound"] == "exact" else "at least "
    return f"{bound}{fleet[f'{what}_bytes'] / bandwidth.GIB:,.1f} GiB"


def report_title(notebook: Path) -> str:
    """The page title: the notebook's first heading, else its name in words."""
    import json

    for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    words = notebook.stem.split("_")
    words = words[1:] if words[0].isdigit() else words
    return " ".join(words).capitalize()


def render_html(
    notebook: Path,
    target: Path,
    *,
    env: dict[str, str],
    workdir: Path,
    note: str = "",
    title: str | None = None,
) -> None:
    """Execute ``notebook`` in a fresh kernel with ``env`` and write it to ``target`` as HTML.

    The page holds outputs only: no input cells, PNG plots embedded, widget views removed;
    ``note`` (markdown) is put under the notebook's title. A cell that fails stops the run with
    the notebook's name and the error.
    """
    if missing := lab_needed("svcnb demo"):  # the notebook runners come with the lab extra
        raise SystemExit(missing)
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from nbconvert import HTMLExporter

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=_CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        store_widget_state=False,
    )
    # The kernel's own chatter (e.g. its transport warning) is shown only when the run fails.
    with tempfile.TemporaryFile() as kernel_log:
        try:
            client.execute(env=env, stderr=kernel_log)
        except CellExecutionError as exc:
            raise SystemExit(f"svcnb demo: {notebook.name} failed:\n{exc}") from None
        except Exception as exc:  # the kernel died or never started: its stderr says why
            kernel_log.seek(0)
            tail = kernel_log.read().decode("utf-8", "replace")[-3000:]
            raise SystemExit(
                f"svcnb demo: {notebook.name} could not run ({type(exc).__name__}: {exc}); "
                f"the kernel said:\n{tail}"
            ) from None
    _drop_widget_views(nb)
    _offline_wording(nb)
    if note:
        nb.cells.insert(1, nbformat.v4.new_markdown_cell(note))
    exporter = HTMLExporter(
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    title = title or report_title(notebook)
    nb.metadata["title"] = title
    body, _resources = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    _files.write(target, _REMOTE_TAGS.sub("", body), secret=False)


# Notebook prose that points at a live control; on a page it points at the live notebook.
_LIVE_ONLY = (
    ("in the editor above", "in the rule editor of the notebook opened in JupyterLab"),
    ("drag the slider", "move the date slider of the notebook opened in JupyterLab"),
)


def _offline_wording(nb: object) -> None:
    for cell in nb.cells:  # type: ignore[attr-defined]
        if cell.get("cell_type") == "markdown":
            text = cell["source"]
            for live, offline in _LIVE_ONLY:
                text = re.sub(re.escape(live), offline, text, flags=re.IGNORECASE)
            cell["source"] = text


def _drop_widget_views(nb: object) -> None:
    """Remove widget views (and their bare repr) from every output; a panel's static HTML
    (``text/html`` beside its view) stays in their place; everything else is kept."""
    for cell in nb.cells:  # type: ignore[attr-defined]
        outputs = []
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and _WIDGET_VIEW in data:
                if "text/html" not in data:
                    continue
                output["data"] = {"text/html": data["text/html"]}
            outputs.append(output)
        if "outputs" in cell:
            cell["outputs"] = outputs
    metadata = nb.metadata  # type: ignore[attr-defined]
    metadata.pop("widgets", None)
