"""Which IP addresses outbound requests may reach: public unicast only.

An explicit table rather than only `ipaddress`'s flags, whose meaning has changed between
Python releases; `is_global` is still consulted last as a safety net.
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Instance metadata and platform endpoints: never reachable, whatever the settings.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle
        "169.254.170.2",  # AWS ECS task metadata
        "168.63.129.16",  # Azure WireServer (a public-looking address)
        "100.100.100.200",  # Alibaba Cloud
        "fd00:ec2::254",  # AWS, over IPv6
    )
)

BLOCKED_NETWORKS: tuple[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.ip_network(network), reason)
    for network, reason in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared carrier-grade NAT"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "reserved"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "reserved"),
        ("198.51.100.0/24", "reserved"),
        ("203.0.113.0/24", "reserved"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("64:ff9b:1::/48", "private"),
        ("100::/64", "reserved"),
        ("2001::/23", "reserved"),
        ("2001:db8::/32", "reserved"),
        ("3fff::/20", "reserved"),
        ("fc00::/7", "private"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "reserved"),
        ("ff00::/8", "multicast"),
    )
)

GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")
IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")  # RFC 2765
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")  # deprecated ::a.b.c.d


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries: mapped, translated, NAT64, IPv4-compatible,
    6to4 and Teredo (server and client) forms."""
    found: list[ipaddress.IPv4Address] = []
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    compatible = address in IPV4_COMPATIBLE and int(address) > 1  # not :: or ::1
    if compatible or address in IPV4_TRANSLATED or address in NAT64_WELL_KNOWN:
        found.append(low32)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def blocked_reason(address: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why outbound requests may not reach `address`, or None when it is public.

    `allow_loopback` (tests only) admits 127.0.0.0/8 and ::1 written plainly; loopback
    hidden inside an IPv6 form stays refused.
    """
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return "link-local"
        for inner in embedded_ipv4(address):
            reason = blocked_reason(inner)
            if reason:
                return f"{reason}, inside an IPv6 address"
    if allow_loopback and address.is_loopback:
        return None
    for network, reason in BLOCKED_NETWORKS:
        if address in network:
            return reason
    if isinstance(address, ipaddress.IPv6Address) and address not in GLOBAL_UNICAST_V6:
        return "reserved"
    if not address.is_global:
        return "not publicly routable"
    return None
