"""Who is calling: pluggable authentication for every API service.

Two strategies, picked by ``[api] auth_strategy``:

``noauth2`` (development, tests, the all-in-one mode)
    ``X-Auth-Token: admin`` is the cloud admin. Any other token is an ordinary user; the
    ``<user>:<project>`` form (``X-Auth-Token: alice:demo``) names the user and project.
    No token at all is a 401.

``keystone`` (production)
    The service is wrapped in ``keystonemiddleware.auth_token`` (the ``keystone`` pip extra),
    which validates the token with Keystone and sets ``X-User-Id``, ``X-Project-Id`` and
    ``X-Roles``; the role ``admin`` is the admin. The middleware reads its own
    ``[keystone_authtoken]`` group from the same config file as the rest of the settings.

Either way the result is an ``Identity`` stored in the WSGI environ under ``IDENTITY_KEY``;
services read it with ``identity_of(environ)`` and apply their policy (Placement: admin only).
Another strategy is a function ``(app, settings) -> app`` that sets that key; add it to
``STRATEGIES``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Iterable
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.conf import Settings
from vgpucloud.errors import ConfigError

IDENTITY_KEY = "vgpucloud.identity"
ADMIN_ROLE = "admin"

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclasses.dataclass(frozen=True, slots=True)
class Identity:
    user_id: str
    project_id: str
    roles: frozenset[str]

    @property
    def is_admin(self) -> bool:
        return ADMIN_ROLE in self.roles


def identity_of(environ: dict[str, Any]) -> Identity | None:
    identity = environ.get(IDENTITY_KEY)
    return identity if isinstance(identity, Identity) else None


def noauth_identity(token: str) -> Identity:
    """``"admin"`` -> the admin; ``"alice:demo"`` -> user alice in project demo."""
    if token == "admin":
        return Identity("admin", "admin", frozenset({ADMIN_ROLE}))
    user, _, project = token.partition(":")
    return Identity(user, project or user, frozenset({"member"}))


def noauth2(app: WSGIApp, settings: Settings) -> WSGIApp:
    """Trust the token as a name; see the module docstring."""

    def middleware(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        token = environ.get("HTTP_X_AUTH_TOKEN")
        if not token:
            raise faults.unauthorized(
                "The request you have made requires authentication: send an X-Auth-Token "
                "header ('admin' for the admin under noauth2).")
        environ[IDENTITY_KEY] = noauth_identity(token)
        return app(environ, start_response)

    return middleware


def _identity_from_keystone_headers(app: WSGIApp) -> WSGIApp:
    def inner(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = webob.Request(environ)
        roles = {r.strip().lower() for r in request.headers.get("X-Roles", "").split(",")}
        environ[IDENTITY_KEY] = Identity(
            request.headers.get("X-User-Id", ""), request.headers.get("X-Project-Id", ""),
            frozenset(r for r in roles if r))
        return app(environ, start_response)

    return inner


def keystone(app: WSGIApp, settings: Settings) -> WSGIApp:
    """Validate tokens with Keystone through keystonemiddleware (imported only here)."""
    try:
        auth_token = importlib.import_module("keystonemiddleware.auth_token")
    except ModuleNotFoundError as exc:
        raise ConfigError([
            "[api] auth_strategy = keystone needs keystonemiddleware, which is not "
            "installed; run `pip install 'vgpucloud[keystone]'` or set auth_strategy = "
            "noauth2"]) from exc
    conf: dict[str, Any] = {}
    if settings.raw is not None:
        conf["oslo_config_config"] = settings.raw
    protocol: WSGIApp = auth_token.AuthProtocol(_identity_from_keystone_headers(app), conf)
    return protocol


STRATEGIES: dict[str, Callable[[WSGIApp, Settings], WSGIApp]] = {
    "noauth2": noauth2,
    "keystone": keystone,
}


def authenticated(app: WSGIApp, settings: Settings) -> WSGIApp:
    """``app`` behind the strategy ``settings.auth_strategy`` names."""
    try:
        strategy = STRATEGIES[settings.auth_strategy]
    except KeyError:
        raise ConfigError([
            f"[api] auth_strategy = {settings.auth_strategy!r} is unknown; use one of "
            f"{', '.join(sorted(STRATEGIES))}"]) from None
    return strategy(app, settings)
