"""dns_random dials a documentation address (RFC 5737), and each client reports a timeout
in its own words."""

from __future__ import annotations

import ipaddress
from collections import Counter
from pathlib import Path

from r2act.campaigns import load_manifest, plan_incidents
from r2act.systems.onlineboutique.errors import go_client_error, python_inactive

ROOT = Path(__file__).resolve().parents[3]
DOC_NETS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]


def test_every_drawn_address_reaches_no_real_host() -> None:
    incidents = plan_incidents(load_manifest(ROOT / "campaigns" / "r2act-302.yaml"))
    values = [
        str(i.fault.parameters["value"]) for i in incidents if i.fault.type.value == "dns_random"
    ]
    assert len(values) >= 48
    nets: Counter[str] = Counter()
    for value in values:
        host, port = value.rsplit(":", 1)
        address = ipaddress.ip_address(host)
        (net,) = [n for n in DOC_NETS if address in n]
        assert address not in (net.network_address, net.broadcast_address)
        nets[str(net)] += 1
        assert port.isdigit()
    assert len(nets) == 3  # every range is drawn
    assert len(set(values)) > len(values) // 2


def test_a_go_client_times_out_connecting_and_a_python_client_says_so_its_way() -> None:
    kind = "dns_random@198.51.100.7:7070"
    go = go_client_error(kind, "cartservice")
    assert go == (
        "rpc error: code = Unavailable desc = connection error: desc = "
        '"transport: Error while dialing: dial tcp 198.51.100.7:7070: i/o timeout"'
    )
    python = python_inactive("dns_random@198.51.100.7:3550", "productcatalogservice")
    assert "ipv4:198.51.100.7:3550: Failed to connect to remote host: Timeout occurred" in python
    assert "i/o timeout" not in python
