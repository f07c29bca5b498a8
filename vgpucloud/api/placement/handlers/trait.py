"""/traits, /traits/{name} and /resource_providers/{uuid}/traits (1.6+)."""

from __future__ import annotations

import re

import webob

from vgpucloud.api.placement import params
from vgpucloud.api.placement.context import (
    PlacementRequest,
    empty_response,
    json_response,
)
from vgpucloud.api.placement.schemas import trait as schema
from vgpucloud.errors import BadRequest, NotFound

_CUSTOM_TRAIT = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


def _name_filter(value: str) -> tuple[list[str] | None, str | None]:
    """``"in:A,B"`` -> (["A", "B"], None); ``"startswith:CUSTOM_"`` -> (None, "CUSTOM_")."""
    if value.startswith("in:") and value[3:]:
        return [name.strip() for name in value[3:].split(",")], None
    if value.startswith("startswith:"):
        return None, value[len("startswith:"):]
    raise BadRequest(
        "Badly formatted name parameter. Expected name query string parameter in form: "
        f"?name=startswith:[prefix] or ?name=in:[name1,name2...]. Got: \"{value}\"")


def list_traits(request: PlacementRequest) -> webob.Response:
    pairs = request.query()
    params.reject_unknown(pairs, ("name", "associated"))
    name = params.single_value(pairs, "name")
    associated = params.single_value(pairs, "associated")
    name_in, startswith = _name_filter(name) if name is not None else (None, None)
    traits = request.store.list_traits(
        name_in=name_in, name_startswith=startswith,
        associated=params.parse_bool("associated", associated) if associated else None)
    return json_response(request, {"traits": traits})


def show_trait(request: PlacementRequest) -> webob.Response:
    name = request.params["name"]
    if not request.store.trait_exists(name):
        raise NotFound(f"No such trait(s): {name}")
    return empty_response()


def ensure_trait(request: PlacementRequest) -> webob.Response:
    name = request.params["name"]
    if len(name) > 255 or not _CUSTOM_TRAIT.match(name):
        raise BadRequest(
            f"The trait {name} is invalid. A valid trait must be no longer than 255 "
            'characters, start with the prefix "CUSTOM_" and use following characters: '
            '"A"-"Z", "0"-"9" and "_"')
    if request.store.ensure_trait(name):
        return empty_response(201, location=request.url(f"/traits/{name}"))
    return empty_response(204, location=request.url(f"/traits/{name}"))


def delete_trait(request: PlacementRequest) -> webob.Response:
    request.store.delete_trait(request.params["name"])
    return empty_response()


def _provider_traits_body(generation: int, traits: list[str]) -> dict[str, object]:
    return {"traits": sorted(traits), "resource_provider_generation": generation}


def list_provider_traits(request: PlacementRequest) -> webob.Response:
    generation, traits = request.store.get_provider_traits(request.params["uuid"])
    return json_response(request, _provider_traits_body(generation, traits))


def replace_provider_traits(request: PlacementRequest) -> webob.Response:
    rp_uuid = request.params["uuid"]
    data = request.body(schema.PUT_PROVIDER_TRAITS)
    request.store.get_provider(rp_uuid)
    missing = sorted(n for n in data["traits"] if not request.store.trait_exists(n))
    if missing:
        raise BadRequest(f"No such trait(s): {', '.join(missing)}")
    generation = request.store.set_provider_traits(
        rp_uuid, data["resource_provider_generation"], data["traits"])
    return json_response(request, _provider_traits_body(generation, data["traits"]))


def delete_provider_traits(request: PlacementRequest) -> webob.Response:
    request.store.delete_provider_traits(request.params["uuid"])
    return empty_response()
