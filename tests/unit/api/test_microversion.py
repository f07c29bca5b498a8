"""Microversion negotiation, as microversion_parse does it for OpenStack services."""

from __future__ import annotations

import pytest

from vgpucloud.api.microversion import (
    InvalidVersion,
    UnacceptableVersion,
    Version,
    negotiate,
    requested_version_text,
)

LOW, HIGH = Version(1, 0), Version(1, 39)


def test_no_header_gets_the_minimum() -> None:
    assert negotiate([], "placement", LOW, HIGH) == LOW


def test_header_for_another_service_only_gets_the_minimum() -> None:
    assert negotiate(["compute 2.79"], "placement", LOW, HIGH) == LOW


def test_latest_gets_the_maximum() -> None:
    assert negotiate(["placement latest"], "placement", LOW, HIGH) == HIGH


def test_service_type_is_case_insensitive_and_items_comma_separated() -> None:
    assert negotiate(["compute 2.1, PLACEMENT 1.20"], "placement", LOW, HIGH) == Version(1, 20)


def test_repeated_headers_are_searched_in_order() -> None:
    assert requested_version_text(["compute 2.1", "placement 1.5"], "placement") == "1.5"


def test_leading_zero_minor_is_the_same_version() -> None:
    assert negotiate(["placement 1.05"], "placement", LOW, HIGH) == Version(1, 5)


@pytest.mark.parametrize("text", ["1.40", "2.0", "0.9"])
def test_out_of_range_version_is_unacceptable(text: str) -> None:
    with pytest.raises(UnacceptableVersion, match=r"1\.0 to 1\.39"):
        negotiate([f"placement {text}"], "placement", LOW, HIGH)


@pytest.mark.parametrize("text", ["1.a", "1", "one.two", "1.2.3"])
def test_malformed_version_is_invalid(text: str) -> None:
    with pytest.raises(InvalidVersion):
        negotiate([f"placement {text}"], "placement", LOW, HIGH)


def test_version_without_service_name_is_unacceptable() -> None:
    with pytest.raises(UnacceptableVersion, match="no service type"):
        negotiate(["1.20"], "placement", LOW, HIGH)


def test_versions_compare_numerically_not_textually() -> None:
    assert Version.parse("1.10") > Version.parse("1.9")
    assert str(Version(1, 39)) == "1.39"
