"""A route table as data, matched by method, path template and microversion.

A service declares its API as a tuple of ``Route`` values, e.g.::

    Route("GET", "/resource_providers/{uuid}", show_provider, "placement:resource_providers:show")
    Route("DELETE", "/resource_providers/{uuid}/inventories", delete_all,
          "placement:resource_providers:inventories:delete", min_version=Version(1, 5),
          below_status=405)

``Router.match`` answers 404 for a path no template matches, 405 (with ``Allow``) for a known
path and a method it does not have, and ``below_status`` (404 unless said otherwise, as
OpenStack does) when the route exists only from a later microversion.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

from vgpucloud.api import faults
from vgpucloud.api.microversion import Version

_PARAM = re.compile(r"\{(\w+)\}")
FIRST_VERSION = Version(1, 0)


@dataclasses.dataclass(frozen=True, slots=True)
class Route:
    method: str
    template: str
    handler: Callable[..., Any]
    policy: str
    min_version: Version = FIRST_VERSION
    max_version: Version | None = None
    below_status: int = 404
    # The request must carry a JSON body (415 otherwise, as OpenStack's require_content).
    json_body: bool = False
    # Served without authentication (version documents).
    public: bool = False

    def serves(self, version: Version) -> bool:
        return self.min_version <= version and (
            self.max_version is None or version <= self.max_version)


def _compile(template: str) -> re.Pattern[str]:
    pattern = ""
    position = 0
    for match in _PARAM.finditer(template):
        pattern += re.escape(template[position:match.start()])
        pattern += f"(?P<{match.group(1)}>[^/]+)"
        position = match.end()
    pattern += re.escape(template[position:])
    return re.compile(f"^{pattern}$")


class Router:
    def __init__(self, routes: Sequence[Route]) -> None:
        self._templates: list[tuple[re.Pattern[str], str, list[Route]]] = []
        by_template: dict[str, list[Route]] = {}
        for route in routes:
            by_template.setdefault(route.template, []).append(route)
        for template, group in by_template.items():
            self._templates.append((_compile(template), template, group))

    @property
    def routes(self) -> list[Route]:
        return [route for _, _, group in self._templates for route in group]

    def resolve(self, method: str, path: str) -> tuple[list[Route], dict[str, str]]:
        """Routes for ``path`` with ``method`` (any microversion) and the path parameters."""
        for pattern, _template, group in self._templates:
            found = pattern.match(path)
            if not found:
                continue
            candidates = [route for route in group if route.method == method]
            if not candidates:
                allowed = sorted({route.method for route in group})
                raise faults.method_not_allowed(method, path, allowed)
            return candidates, found.groupdict()
        raise faults.not_found(f"No resource at {path}; check the path and the API reference.")

    def match(self, method: str, path: str, version: Version) -> tuple[Route, dict[str, str]]:
        candidates, params = self.resolve(method, path)
        return self.select(candidates, params, method, path, version)

    @staticmethod
    def select(candidates: list[Route], params: dict[str, str], method: str, path: str,
               version: Version) -> tuple[Route, dict[str, str]]:
        """The route of ``candidates`` (what ``resolve`` found) that serves ``version``."""
        for route in candidates:
            if route.serves(version):
                return route, params
        first = min(candidates, key=lambda route: route.min_version)
        status = first.below_status if version < first.min_version else 404
        raise faults.HTTPFault(
            status, f"{method} {path} is not available at microversion {version}; it needs "
            f"{first.min_version} or later (send the OpenStack-API-Version header).")
