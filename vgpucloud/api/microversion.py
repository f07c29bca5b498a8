"""Microversion negotiation with the ``OpenStack-API-Version`` header.

Follows the semantics of OpenStack's ``microversion_parse`` so real clients see what they
see against OpenStack: the header carries ``<service> <version>`` items, comma separated
or repeated, e.g.::

    OpenStack-API-Version: compute 2.79, placement 1.39

- no item for the service: the service's minimum version;
- ``latest``: its maximum;
- a version that is not ``MAJOR.MINOR`` integers (``placement 1.a``): 400;
- an item without a service name (``1.20``) or a version outside the range: 406.

The negotiated version is echoed as ``OpenStack-API-Version: placement 1.39`` with
``Vary: openstack-api-version`` so caches keep versions apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

HEADER = "OpenStack-API-Version"


class Version(NamedTuple):
    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    @classmethod
    def parse(cls, text: str) -> Version:
        """``"1.39"`` -> ``Version(1, 39)``. Raises ``InvalidVersion`` for anything else."""
        major, dot, minor = text.strip().partition(".")
        if not dot:
            raise InvalidVersion(f"invalid version string: {text!r}; expected MAJOR.MINOR")
        try:
            return cls(int(major), int(minor))
        except ValueError as exc:
            raise InvalidVersion(f"invalid version string: {text!r}; {exc}") from exc


class InvalidVersion(ValueError):
    """The version text is not ``MAJOR.MINOR`` (answered with 400)."""


class UnacceptableVersion(ValueError):
    """The header is malformed or asks for a version this service does not serve (406)."""


def requested_version_text(header_values: Iterable[str], service_type: str) -> str | None:
    """The version text asked for ``service_type``, or None when the header does not name it.

    ``["compute 2.1, placement 1.20"]`` with ``"placement"`` gives ``"1.20"``.
    """
    for value in header_values:
        for item in value.split(","):
            if not item.strip():
                continue
            service, _, version = item.strip().partition(" ")
            if not version.strip():
                raise UnacceptableVersion(
                    f"header item {item.strip()!r} has no service type; send "
                    f"'{HEADER}: {service_type} <version>'")
            if service.lower() == service_type.lower():
                return version.strip()
    return None


def negotiate(
    header_values: Iterable[str], service_type: str, minimum: Version, maximum: Version
) -> Version:
    """The version to serve, given the request's ``OpenStack-API-Version`` header values."""
    text = requested_version_text(header_values, service_type)
    if text is None:
        return minimum
    if text.lower() == "latest":
        return maximum
    version = Version.parse(text)
    if not minimum <= version <= maximum:
        raise UnacceptableVersion(
            f"Unacceptable version header: {text}; this service serves "
            f"{service_type} {minimum} to {maximum}")
    return version
