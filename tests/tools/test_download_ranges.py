"""The `data_url` filter refuses every special-purpose address range (IANA's IPv4 and IPv6
registries, multicast, and the prefixes that embed an IPv4 address), and only those."""

from __future__ import annotations

import ipaddress

import pytest

from tools.download import SPECIAL_PURPOSE, public

NAMED = {
    "this network 0.0.0.0/8": "0.1.2.3",
    "private 10/8": "10.1.2.3",
    "shared address space 100.64.0.0/10": "100.100.0.1",
    "loopback 127/8": "127.0.0.2",
    "link local 169.254/16": "169.254.169.254",
    "private 172.16/12": "172.20.0.1",
    "IETF protocol assignments 192.0.0.0/24": "192.0.0.9",
    "documentation TEST-NET-1": "192.0.2.1",
    "AS112-v4 192.31.196.0/24": "192.31.196.1",
    "AMT 192.52.193.0/24": "192.52.193.1",
    "6to4 relay anycast 192.88.99.0/24": "192.88.99.1",
    "private 192.168/16": "192.168.1.1",
    "direct delegation AS112 192.175.48.0/24": "192.175.48.1",
    "benchmarking 198.18.0.0/15": "198.19.255.1",
    "documentation TEST-NET-2": "198.51.100.7",
    "documentation TEST-NET-3": "203.0.113.9",
    "reserved 240/4": "250.1.2.3",
    "limited broadcast": "255.255.255.255",
    "IPv4 multicast": "239.1.2.3",
    "unspecified ::": "::",
    "loopback ::1": "::1",
    "IPv4-mapped (loopback)": "::ffff:127.0.0.1",
    "IPv4-mapped (public)": "::ffff:93.184.215.14",
    "IPv4-compatible": "::7f00:1",
    "NAT64 64:ff9b::/96 (to loopback)": "64:ff9b::7f00:1",
    "NAT64 64:ff9b::/96 (to public)": "64:ff9b::5db8:d70e",
    "local-use NAT64 64:ff9b:1::/48": "64:ff9b:1::a00:1",
    "discard-only 100::/64": "100::1",
    "dummy prefix 100:0:0:1::/64": "100:0:0:1::1",
    "Teredo 2001::/32": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "benchmarking 2001:2::/48": "2001:2::1",
    "AMT 2001:3::/32": "2001:3::1",
    "AS112-v6 2001:4:112::/48": "2001:4:112::1",
    "ORCHID 2001:10::/28": "2001:10::1",
    "ORCHIDv2 2001:20::/28": "2001:20::1",
    "drone remote ID 2001:30::/28": "2001:30::1",
    "documentation 2001:db8::/32": "2001:db8::1",
    "6to4 2002::/16 (to loopback)": "2002:7f00:1::1",
    "6to4 2002::/16 (to public)": "2002:5db8:d70e::1",
    "direct delegation AS112 2620:4f:8000::/48": "2620:4f:8000::1",
    "documentation 3fff::/20": "3fff::1",
    "SRv6 SIDs 5f00::/16": "5f00::1",
    "unique local fc00::/7": "fd12:3456::1",
    "link local fe80::/10": "fe80::1",
    "site local fec0::/10": "fec0::1",
    "IPv6 multicast": "ff02::1",
    "IPv6 global multicast": "ff0e::1",
}


@pytest.mark.parametrize("address", NAMED.values(), ids=NAMED.keys())
def test_named_special_purpose_addresses_are_refused(address):
    assert not public(ipaddress.ip_address(address))


def _samples(network):
    """The first, a middle and the last address of a range."""
    return {network.network_address, network.network_address + network.num_addresses // 2, network.broadcast_address}


@pytest.mark.parametrize("network", SPECIAL_PURPOSE, ids=str)
def test_every_address_of_every_special_range_is_refused(network):
    assert [a for a in _samples(network) if public(a)] == []


@pytest.mark.parametrize("address", ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450::1"])
def test_public_addresses_pass(address):
    assert public(ipaddress.ip_address(address))
