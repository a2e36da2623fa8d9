"""Firewall audit: which rules expose which VMs, which rules never apply, what changed.

:func:`audit` returns one findings frame; each finding names its ``check``:

==========================  ========  ==========================================================
check                       severity  meaning
==========================  ========  ==========================================================
exposed_sensitive_port      high      inbound ACCEPT from any source to SSH, RDP, a database,
                                      a cache, a search engine or the Docker API
accept_any_protocol         high/med  ACCEPT with protocol ANY (high when inbound from anywhere)
shadowed                    med/low   an earlier rule matches everything this one does (medium
                                      when its action differs: this rule never takes effect)
duplicate                   low       the same match and action as an earlier rule
unparsed_port               high/med  the port could not be read: a form svcnb does not know, or
                                      a sentinel whose meaning is not pinned ("0": every port at
                                      DigitalOcean, port 0 elsewhere; "" on TCP/UDP); an ACCEPT
                                      may be open to every port (high when inbound from anywhere)
unparsed_ip                 medium    an IP entry is not an address or CIDR
ip_list_near_cap            low       an IP list holds 45 or more of the 50 entries allowed
vm_without_firewall         medium    a VM (status class not terminated) has no firewall attached
firewall_unattached         info      a firewall protects no VM
==========================  ========  ==========================================================

"From any source" means an empty source list (the contract: ``[]`` is any), ``0.0.0.0/0``,
``::/0`` or ``any``. A missing (NA) or empty port is no port restriction on ICMP, ESP and GRE;
on TCP, UDP and ANY it is a sentinel, unread until pinned (``svcnb.reports._ports``). Rules whose
port or IPs do not parse are never called shadowed nor said to shadow others: their match is
unknown; ``audit(...).attrs["unread_ports"]`` names the rules whose port could not be read.
``parse_port`` and ``parse_ips`` read a rule's port and address list as the audit does;
``ANY_WORDS`` are the port words read as every port.

:func:`reach` answers one flow ("22/TCP from 203.0.113.5") per VM with the rule that decides it,
on the same parsed rules and first-match model; :func:`reach_diff` lists the flows an edit
opens, closes or makes unknown over the VMs of the changed firewalls.
"""

from __future__ import annotations

from svcnb.reports._plots.firewall import plot_findings
from svcnb.reports._ports import (
    ANY_WORDS,
    PORTLESS_PROTOCOLS,
    SENTINELS,
    parse_ips,
    parse_port,
    sentinel_pins,
)
from svcnb.reports.firewall._audit_view import VIEW, view
from svcnb.reports.firewall._changes import changes, finding_changes, rule_changes
from svcnb.reports.firewall._findings import (
    FINDING_CHANGE_COLUMNS,
    FINDING_COLUMNS,
    FINDING_STATES,
    IP_LIST_CAP,
    IP_LIST_WARN,
    SENSITIVE_PORTS,
    SEVERITIES,
    audit,
    shadowing,
)
from svcnb.reports.firewall._reachability import (
    DEFAULT_ACTION,
    NO_FIREWALL_ACTION,
    PROBE_PORTS,
    REACH_COLUMNS,
    REACH_DIFF_COLUMNS,
    reach,
    reach_diff,
    reach_diff_words,
)

__all__ = [
    "ANY_WORDS",
    "FINDING_CHANGE_COLUMNS",
    "FINDING_COLUMNS",
    "FINDING_STATES",
    "IP_LIST_CAP",
    "DEFAULT_ACTION",
    "IP_LIST_WARN",
    "NO_FIREWALL_ACTION",
    "PORTLESS_PROTOCOLS",
    "PROBE_PORTS",
    "REACH_COLUMNS",
    "REACH_DIFF_COLUMNS",
    "SENSITIVE_PORTS",
    "SENTINELS",
    "SEVERITIES",
    "VIEW",
    "audit",
    "changes",
    "finding_changes",
    "parse_ips",
    "parse_port",
    "sentinel_pins",
    "plot_findings",
    "reach",
    "reach_diff",
    "reach_diff_words",
    "rule_changes",
    "shadowing",
    "view",
]
