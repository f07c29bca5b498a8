"""Auth identities and the route table, without a store."""

from __future__ import annotations

import pytest

from vgpucloud.api import faults
from vgpucloud.api.auth import _identity_from_keystone_headers, noauth_identity
from vgpucloud.api.microversion import Version
from vgpucloud.api.placement.routes import ROUTES
from vgpucloud.api.routing import Route, Router
from vgpucloud.cli.api import parse_bind
from vgpucloud.errors import ConfigError


def test_noauth_admin_token_is_admin() -> None:
    assert noauth_identity("admin").is_admin


def test_noauth_user_project_token_is_a_plain_user() -> None:
    identity = noauth_identity("alice:demo")
    assert (identity.user_id, identity.project_id, identity.is_admin) == ("alice", "demo", False)


def test_keystone_admin_role_is_admin() -> None:
    seen = {}

    def app(environ: dict, start_response: object) -> list[bytes]:
        seen["identity"] = environ["vgpucloud.identity"]
        return []

    environ = {"HTTP_X_ROLES": "reader, Admin", "HTTP_X_USER_ID": "u1",
               "HTTP_X_PROJECT_ID": "p1"}
    _identity_from_keystone_headers(app)(environ, lambda *a: None)
    assert seen["identity"].is_admin
    assert seen["identity"].project_id == "p1"


def _noop(request: object) -> None:
    return None


ROUTER = Router([
    Route("GET", "/things/{id}", _noop, "things:show"),
    Route("PUT", "/things/{id}", _noop, "things:update", min_version=Version(1, 2),
          max_version=Version(1, 6)),
    Route("PUT", "/things/{id}", _noop, "things:ensure", min_version=Version(1, 7)),
    Route("DELETE", "/things/{id}", _noop, "things:delete", min_version=Version(1, 5),
          below_status=405),
])


def test_path_parameters_are_extracted() -> None:
    route, params = ROUTER.match("GET", "/things/abc", Version(1, 0))
    assert route.policy == "things:show"
    assert params == {"id": "abc"}


def test_version_ranges_pick_the_handler() -> None:
    assert ROUTER.match("PUT", "/things/x", Version(1, 6))[0].policy == "things:update"
    assert ROUTER.match("PUT", "/things/x", Version(1, 7))[0].policy == "things:ensure"


def test_route_below_its_version_uses_its_status() -> None:
    with pytest.raises(faults.HTTPFault) as caught:
        ROUTER.match("DELETE", "/things/x", Version(1, 4))
    assert caught.value.http_status == 405
    with pytest.raises(faults.HTTPFault) as caught:
        ROUTER.match("PUT", "/things/x", Version(1, 1))
    assert caught.value.http_status == 404


def test_wrong_method_lists_the_allowed_ones() -> None:
    with pytest.raises(faults.HTTPFault) as caught:
        ROUTER.match("POST", "/things/x", Version(1, 0))
    assert caught.value.http_status == 405
    assert caught.value.headers["Allow"] == "DELETE, GET, PUT"


def test_unknown_path_is_not_found() -> None:
    with pytest.raises(faults.HTTPFault) as caught:
        ROUTER.match("GET", "/things/x/y", Version(1, 0))
    assert caught.value.http_status == 404


def test_placement_routes_have_policies_except_the_version_document() -> None:
    for route in ROUTES:
        assert route.public or route.policy.startswith("placement:"), route


def test_placement_version_ranges_never_overlap() -> None:
    seen: dict[tuple[str, str], list[Route]] = {}
    for route in ROUTES:
        seen.setdefault((route.method, route.template), []).append(route)
    for group in seen.values():
        for minor in range(40):
            assert sum(r.serves(Version(1, minor)) for r in group) <= 1


def test_error_detail_keeps_webobs_explanation() -> None:
    body = faults.error_document(409, "generation conflict", code="placement.concurrent_update",
                                 request_id="req-1")
    error = body["errors"][0]
    assert error["title"] == "Conflict"
    assert error["detail"].endswith(" generation conflict  ")
    assert error["code"] == "placement.concurrent_update"


def test_parse_bind() -> None:
    assert parse_bind("127.0.0.1:8780") == ("127.0.0.1", 8780)
    assert parse_bind("[::1]:0") == ("::1", 0)
    with pytest.raises(ConfigError):
        parse_bind("8780")
