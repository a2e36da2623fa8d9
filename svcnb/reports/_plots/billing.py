"""The billing report's plots: renewals by day, the wallet balance and its runway.

Each draws a frame :mod:`svcnb.reports.billing` computed; ``svcnb.reports.billing`` hands
them on under the same names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from svcnb.reports._timeaxis import axes, concise_dates, legend_outside, money_axis

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_balance", "plot_renewals"]


def plot_renewals(frame: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Renewals calendar: the amount renewing each day, one bar series per currency.

    ``frame`` is the output of :func:`renewals` (renewal_at, amount, currency).
    """
    ax = axes(ax)
    if frame.empty:
        ax.set_title("Renewals: none due")
        return ax
    days = frame.assign(
        day=frame["renewal_at"].dt.tz_convert("UTC").dt.floor("D").dt.tz_localize(None),
        currency=frame["currency"].astype("string").fillna("unknown"),
    )
    daily = days.groupby(["day", "currency"])["amount"].sum().unstack("currency", fill_value=0)
    currencies = list(daily.columns)
    width = 0.8 / max(len(currencies), 1)
    for i, cur in enumerate(currencies):
        offset = pd.Timedelta(days=(i - (len(currencies) - 1) / 2) * width)
        days_at = pd.DatetimeIndex(daily.index)  # naive days (floored above): already one
        ax.bar(days_at + offset, daily[cur].astype(float), width=width, label=str(cur))
    ax.set_title("Renewals by day")
    ax.set_xlabel("renewal date (UTC)")
    money_axis(ax, currencies[0] if len(currencies) == 1 else None, what="amount renewing")
    if len(currencies) > 1:
        ax.set_ylabel("amount renewing (per currency)")
        legend_outside(ax, title="currency")
    concise_dates(ax)
    return ax


def plot_balance(
    history: pd.DataFrame,
    schedule: pd.DataFrame | None = None,
    runway_frame: pd.DataFrame | None = None,
    ax: Axes | None = None,
) -> Axes:
    """Wallet balance over time, its projection through the renewals, and the runway date.

    ``history`` from :func:`balance_history` (server_time, balance); ``schedule`` from
    :func:`renewal_schedule` (renewal_at, balance_after, debitable) draws the projected balance;
    ``runway_frame`` from :func:`runway` (runway_at, currency) draws a vertical line at the
    runway and names the axis' currency (the account currency, as the runway states it). When
    the runway is not ``complete`` (VMs left out of the walk), the projection is the most the
    balance can be and the runway the latest it can come: the legend says "at most" and "by",
    as the figures do.
    """
    ax = axes(ax)
    complete = True
    if runway_frame is not None and not runway_frame.empty and "complete" in runway_frame:
        complete = runway_frame["complete"].iloc[0]
    bounded = pd.isna(complete) or not bool(complete)
    if not history.empty:
        ax.plot(
            history["server_time"].dt.tz_localize(None),
            history["balance"].astype(float),
            marker="o",
            label="balance",
        )
    if schedule is not None and not schedule.empty:
        debits = schedule[schedule["debitable"].fillna(False)]
        if not debits.empty:
            ax.step(
                debits["renewal_at"].dt.tz_localize(None),
                debits["balance_after"].astype(float),
                where="post",
                linestyle="--",
                label="projected, at most" if bounded else "projected",
            )
    if runway_frame is not None and not runway_frame.empty:
        when = runway_frame["runway_at"].iloc[0]
        if not pd.isna(when):
            ax.axvline(
                when.tz_localize(None),
                color="red",
                label=f"runway {'by ' if bounded else ''}{when:%Y-%m-%d}",
            )
    # the runway's currency is account_currency (the wallet's, else the prices'), the one the
    # figures beside the plot state; a history alone knows only what the wallet said
    currency = None
    if runway_frame is not None and not runway_frame["currency"].dropna().empty:
        currency = runway_frame["currency"].dropna().iloc[0]
    elif "currency" in history and not history["currency"].dropna().empty:
        currency = history["currency"].dropna().iloc[0]
    concise_dates(ax)
    ax.set_title("Wallet balance and runway")
    ax.set_xlabel("time (UTC)")
    money_axis(ax, currency, what="balance")
    legend_outside(ax)
    return ax
