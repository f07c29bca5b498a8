"""Query-string parsing for Placement, pure: (key, value) pairs in, domain queries out.

Shared by ``GET /resource_providers`` and ``GET /allocation_candidates``. Input is the
ordered list of query pairs (``webob.Request.GET.items()``), so repeated keys are visible::

    provider_filter([("resources", "VGPU:1"), ("required", "CUSTOM_MDEV_NVIDIA_35,!CUSTOM_X"),
                     ("member_of", "in:0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c")], Version(1, 39))

Errors are ``QueryDuplicateKey`` (a key given twice where once is the rule),
``QueryBadValue`` (a value that does not parse, or needs a later microversion) and
``BadRequest`` (a key the microversion does not know). Whether named traits, classes or
providers exist is the caller's business: this module touches no store.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from vgpucloud.api.microversion import Version
from vgpucloud.errors import BadRequest, QueryBadValue, QueryDuplicateKey
from vgpucloud.placement.models import AggregateQuery, ProviderFilter, TraitQuery

Pairs = Sequence[tuple[str, str]]

_UUID = re.compile(
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_RC = re.compile(r"^[A-Z0-9_]+$")

# GET /resource_providers: parameter -> microversion that introduced it.
PROVIDER_LIST_PARAMS = {
    "name": Version(1, 0), "uuid": Version(1, 0), "member_of": Version(1, 3),
    "resources": Version(1, 4), "in_tree": Version(1, 14), "required": Version(1, 18),
}


def values_of(pairs: Pairs, key: str) -> list[str]:
    return [value for name, value in pairs if name == key]


def reject_unknown(pairs: Pairs, allowed: Iterable[str]) -> None:
    """``[("nmae", "x")]`` with ``{"name"}`` -> BadRequest naming 'nmae' and the known keys."""
    known = set(allowed)
    unknown = sorted({name for name, _ in pairs if name not in known})
    if unknown:
        raise BadRequest(
            f"Invalid query string parameters: {', '.join(map(repr, unknown))} not allowed "
            f"at this microversion; known: {', '.join(sorted(known))}")


def single_value(pairs: Pairs, key: str) -> str | None:
    """The one value of ``key`` (None if absent); ``a=1&a=2`` -> QueryDuplicateKey."""
    values = values_of(pairs, key)
    if len(values) > 1:
        raise QueryDuplicateKey(
            f"Query parameter {key!r} may only be specified once; got {len(values)} values.")
    return values[0] if values else None


def parse_uuid(key: str, value: str) -> str:
    """``"0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c"`` is returned as is; junk is QueryBadValue."""
    if not _UUID.match(value):
        raise QueryBadValue(
            f"Invalid query string parameters: Expected {key!r} parameter to be a valid "
            f"UUID. Got: {value!r}")
    return value


def parse_resources(value: str) -> dict[str, int]:
    """``"VCPU:2,MEMORY_MB:1024"`` -> ``{"VCPU": 2, "MEMORY_MB": 1024}``."""
    resources: dict[str, int] = {}
    for item in value.split(","):
        name, colon, amount = item.strip().partition(":")
        if not colon or not _RC.match(name) or name in resources:
            raise QueryBadValue(
                "Badly formed resources parameter. Expected resources query string "
                f"parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: {value}.")
        try:
            resources[name] = int(amount)
        except ValueError:
            resources[name] = 0
        if resources[name] < 1:
            raise QueryBadValue(
                f"Requested resource {name} expected positive integer amount. Got: {amount}.")
    return resources


def _trait_names(text: str, key: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not text or not all(names):
        raise QueryBadValue(
            f"Invalid query string parameters: Expected {key!r} parameter value of the form: "
            f"HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got: {text!r}")
    return names


def parse_required(values: Sequence[str], version: Version, key: str = "required") -> TraitQuery:
    """``["CUSTOM_A,!CUSTOM_B", "in:CUSTOM_C,CUSTOM_D"]`` -> required A, forbidden B, any of
    {C, D}. ``!`` needs 1.22; ``in:`` and repeating the key need 1.39."""
    if len(values) > 1 and version < (1, 39):
        raise QueryDuplicateKey(
            f"Query parameter {key!r} may only be specified once before microversion 1.39.")
    required: set[str] = set()
    forbidden: set[str] = set()
    any_of: list[frozenset[str]] = []
    for value in values:
        if value.startswith("in:"):
            if version < (1, 39):
                raise QueryBadValue(f"The 'in:' syntax of {key!r} needs microversion 1.39.")
            names = _trait_names(value[3:], key)
            if any(name.startswith("!") for name in names):
                raise QueryBadValue(
                    f"Forbidden traits (!) cannot be used inside 'in:' in {key!r}: {value!r}")
            any_of.append(frozenset(names))
            continue
        for name in _trait_names(value, key):
            if name.startswith("!"):
                if version < (1, 22):
                    raise QueryBadValue(
                        f"Forbidden traits ({name}) in {key!r} need microversion 1.22.")
                forbidden.add(name[1:])
            else:
                required.add(name)
    conflicting = required & forbidden
    if conflicting:
        raise QueryBadValue(
            "Conflicting required and forbidden traits found in the following traits keys: "
            f"{key}: ({', '.join(sorted(conflicting))})")
    return TraitQuery(frozenset(required), frozenset(forbidden), tuple(any_of))


def _aggregate_uuids(text: str, original: str) -> frozenset[str]:
    uuids = [item.strip() for item in text.split(",")]
    if not all(_UUID.match(item) for item in uuids):
        raise QueryBadValue(
            "Invalid query string parameters: Expected 'member_of' parameter to contain "
            f"valid UUID(s). Got: {original}")
    return frozenset(uuids)


def parse_member_of(values: Sequence[str], version: Version) -> AggregateQuery:
    """``["in:A,B", "C", "!D", "!in:E,F"]`` -> any of {A, B}, and C, and none of D, E, F.

    Repeating ``member_of`` needs 1.24; ``!`` (forbidden) needs 1.32.
    """
    if len(values) > 1 and version < (1, 24):
        raise QueryDuplicateKey(
            "Query parameter 'member_of' may only be specified once before microversion 1.24.")
    any_of: list[frozenset[str]] = []
    forbidden: set[str] = set()
    for value in values:
        text, negated = (value[1:], True) if value.startswith("!") else (value, False)
        if negated and version < (1, 32):
            raise QueryBadValue(f"Forbidden aggregates in member_of ({value}) need 1.32.")
        if text.startswith("in:"):
            uuids = _aggregate_uuids(text[3:], value)
        elif "," in text:
            raise QueryBadValue(
                f"Multiple aggregates in member_of need the 'in:' prefix. Got: {value}")
        else:
            uuids = _aggregate_uuids(text, value)
        if negated:
            forbidden |= uuids
        else:
            any_of.append(uuids)
    return AggregateQuery(tuple(any_of), frozenset(forbidden))


def provider_filter(pairs: Pairs, version: Version) -> ProviderFilter:
    """The filter of ``GET /resource_providers`` at ``version``."""
    reject_unknown(pairs, (k for k, v in PROVIDER_LIST_PARAMS.items() if version >= v))
    uuid = single_value(pairs, "uuid")
    in_tree = single_value(pairs, "in_tree")
    resources = single_value(pairs, "resources")
    return ProviderFilter(
        name=single_value(pairs, "name"),
        uuid=parse_uuid("uuid", uuid) if uuid is not None else None,
        in_tree=parse_uuid("in_tree", in_tree) if in_tree is not None else None,
        member_of=parse_member_of(values_of(pairs, "member_of"), version),
        resources=parse_resources(resources) if resources is not None else None,
        traits=parse_required(values_of(pairs, "required"), version),
    )


def parse_bool(key: str, value: str) -> bool:
    """``"true"`` / ``"false"`` (any case) -> bool; anything else is QueryBadValue."""
    lowered = value.lower()
    if lowered not in ("true", "false"):
        raise QueryBadValue(
            f'The query parameter "{key}" only accepts "true" or "false". Got: {value!r}')
    return lowered == "true"
