"""Flavor extra specs, Nova's grammar: parse them into values and refuse the malformed ones.

A GPU flavor as the vGPU guide sets it::

    openstack flavor set vgpu_1 --property "resources:VGPU=1"
    openstack flavor set vgpu_1 --property trait:CUSTOM_NVIDIA_11=required

and the forms around it::

    resources:VCPU=0                       overrides the flavor's own vcpus (as in Nova)
    resources1:VGPU=1                      numbered group: all of it from ONE provider
    resources_GPU:VGPU=2                   suffixed group (Placement 1.33 names)
    trait1:CUSTOM_NVIDIA_11=required       required trait of group 1
    trait:HW_CPU_X86_AVX512F=forbidden     forbidden trait of the unsuffixed group
    group_policy=isolate                   numbered groups on different providers
    aggregate_instance_extra_specs:gpu=t4  host must be in an aggregate whose metadata gpu=t4
    gpu=t4                                 the same, legacy bare-key form
    hw:cpu_policy=dedicated                checked loosely; unknown namespaces pass through

``parse_extra_specs`` returns a ``ParsedExtraSpecs``; ``validate_extra_specs`` is what the
Compute API calls when a flavor's extra specs are set (it raises ``errors.BadRequest``
naming the key, the problem and the fix).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

import os_resource_classes
import os_traits

from vgpucloud.errors import BadRequest

GROUP_POLICIES = ("none", "isolate")
TRAIT_VALUES = ("required", "forbidden")
AGGREGATE_SCOPE = "aggregate_instance_extra_specs"

# "resources", "resources1", "resources_GPU" — the part after "resources" is the group suffix.
_SUFFIX = r"(?P<suffix>|[1-9][0-9]*|_[A-Za-z0-9_-]{1,64})"
_RESOURCES_KEY = re.compile(rf"^resources{_SUFFIX}:(?P<name>.*)$")
_TRAIT_KEY = re.compile(rf"^trait{_SUFFIX}:(?P<name>.*)$")
_CUSTOM_NAME = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
_INT = re.compile(r"^[0-9]+$")

# AggregateInstanceExtraSpecsFilter's operators, as Nova's extra_specs_ops spells them.
STRING_OPS = ("s==", "s!=", "s>=", "s<=", "s<", "s>")
NUMERIC_OPS = ("==", "!=", ">=", "<=")
LIST_OPS = ("<in>", "<all-in>", "<or>")

# hw: keys we know, with what they accept; other hw: keys pass (new Nova keys keep working).
_HW_CHOICES: dict[str, tuple[str, ...]] = {
    "hw:cpu_policy": ("shared", "dedicated", "mixed"),
    "hw:cpu_thread_policy": ("prefer", "isolate", "require"),
    "hw:mem_encryption": ("true", "false", "True", "False", "1", "0", "yes", "no"),
    "hw:emulator_threads_policy": ("share", "isolate"),
}
_HW_POSITIVE_INTS = ("hw:numa_nodes", "hw:cpu_sockets", "hw:cpu_cores", "hw:cpu_threads",
                     "hw:cpu_max_sockets", "hw:cpu_max_cores", "hw:cpu_max_threads")
_MEM_PAGE_SIZES = ("small", "large", "any")


@dataclasses.dataclass(frozen=True, slots=True)
class GroupSpec:
    """One request group of a flavor: suffix "" is the unsuffixed group."""

    suffix: str
    resources: Mapping[str, int] = dataclasses.field(default_factory=dict)
    required_traits: frozenset[str] = frozenset()
    forbidden_traits: frozenset[str] = frozenset()


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedExtraSpecs:
    """``groups`` maps suffix → group (the unsuffixed one is always present);
    ``aggregate_specs`` maps an aggregate metadata key → the wanted value (with operator)."""

    groups: Mapping[str, GroupSpec]
    group_policy: str | None = None
    aggregate_specs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    hw: Mapping[str, str] = dataclasses.field(default_factory=dict)
    other: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def unsuffixed(self) -> GroupSpec:
        return self.groups[""]

    def numbered(self) -> list[GroupSpec]:
        """The suffixed groups, in a stable order (numbers first, numerically)."""
        return [self.groups[s] for s in sorted((s for s in self.groups if s), key=_suffix_order)]


def _suffix_order(suffix: str) -> tuple[int, int, str]:
    return (0, int(suffix), "") if suffix.isdigit() else (1, 0, suffix)


def validate_extra_specs(specs: Mapping[str, str]) -> None:
    """Raise ``errors.BadRequest`` for the first malformed extra spec, e.g. for
    ``{"resources:VGPU": "one"}``: "Flavor extra spec 'resources:VGPU' has value 'one': …"."""
    parse_extra_specs(specs)


def parse_extra_specs(specs: Mapping[str, str]) -> ParsedExtraSpecs:
    """``{"resources:VGPU": "1", "trait:CUSTOM_NVIDIA_11": "required"}`` →
    ``ParsedExtraSpecs(groups={"": GroupSpec("", {"VGPU": 1}, {"CUSTOM_NVIDIA_11"})})``."""
    resources: dict[str, dict[str, int]] = {"": {}}
    required: dict[str, set[str]] = {"": set()}
    forbidden: dict[str, set[str]] = {"": set()}
    group_policy: str | None = None
    aggregate: dict[str, str] = {}
    hw: dict[str, str] = {}
    other: dict[str, str] = {}
    for key, raw in specs.items():
        value = str(raw).strip()
        if m := _RESOURCES_KEY.match(key):
            rc, amount = _parse_resource(key, m["name"], value)
            resources.setdefault(m["suffix"], {})[rc] = amount
        elif m := _TRAIT_KEY.match(key):
            trait = _parse_trait(key, m["name"], value)
            target = required if value == "required" else forbidden
            target.setdefault(m["suffix"], set()).add(trait)
        elif key == "group_policy":
            group_policy = _parse_group_policy(key, value)
        elif key.startswith(AGGREGATE_SCOPE + ":"):
            name = _aggregate_key(key, key.split(":", 1)[1])
            aggregate[name] = _parse_aggregate_value(key, value)
        elif key.startswith("hw:"):
            hw[key] = _parse_hw(key, value)
        elif key.startswith(("resources", "trait")) and ":" in key:
            raise _bad(key, value, "its group suffix is malformed",
                       "use 'resources:', 'resources<N>:' (N >= 1) or 'resources_<NAME>:' "
                       "(letters, digits, '_' or '-', at most 64), and the same for 'trait'")
        elif ":" not in key:
            # Nova's AggregateInstanceExtraSpecsFilter reads unscoped keys as aggregate specs.
            aggregate[_aggregate_key(key, key)] = _parse_aggregate_value(key, value)
        else:
            other[key] = value
    groups = _assemble_groups(resources, required, forbidden)
    return ParsedExtraSpecs(groups, group_policy, aggregate, hw, other)


def _bad(key: str, value: str, problem: str, fix: str) -> BadRequest:
    return BadRequest(f"Flavor extra spec {key!r} has value {value!r}: {problem}; {fix}.",
                      code="compute.flavor.extra_spec_invalid")


def _parse_resource(key: str, rc: str, value: str) -> tuple[str, int]:
    if rc not in os_resource_classes.STANDARDS and not _CUSTOM_NAME.match(rc):
        raise _bad(key, value, f"{rc!r} is not a resource class",
                   "use a standard class (VCPU, MEMORY_MB, DISK_GB, VGPU, PGPU, ...) or "
                   "CUSTOM_ followed by upper-case letters, digits and '_'")
    if not _INT.match(value):
        raise _bad(key, value, "the amount is not a whole number >= 0",
                   f"set it like '{key}=1'")
    return rc, int(value)


def _parse_trait(key: str, trait: str, value: str) -> str:
    if value not in TRAIT_VALUES:
        raise _bad(key, value, "a trait is either 'required' or 'forbidden'",
                   f"set '{key}=required' or '{key}=forbidden'")
    if not _CUSTOM_NAME.match(trait) and trait not in os_traits.get_traits():
        raise _bad(key, value, f"{trait!r} is neither a standard trait nor a custom one",
                   "check the spelling against 'openstack trait list', or use a name "
                   "like CUSTOM_NVIDIA_11 (CUSTOM_ + upper-case letters, digits, '_')")
    return trait


def _parse_group_policy(key: str, value: str) -> str:
    if value not in GROUP_POLICIES:
        raise _bad(key, value, "the group policy is unknown",
                   "use 'group_policy=isolate' (numbered groups on different providers) "
                   "or 'group_policy=none'")
    return value


def _aggregate_key(key: str, name: str) -> str:
    if not name or not re.match(r"^[A-Za-z0-9_.\-:]+$", name):
        raise _bad(key, "", "the aggregate metadata key is empty or has odd characters",
                   "name an aggregate metadata key of letters, digits, '_', '.', '-'")
    return name


def _parse_aggregate_value(key: str, value: str) -> str:
    """``"t4"``, ``"<in> t4"``, ``"<or> t4 <or> m60"``, ``">= 2"``, ``"s== t4"``."""
    op, _, operand = value.partition(" ")
    if op in NUMERIC_OPS and not _is_number(operand.strip()):
        raise _bad(key, value, f"operator {op!r} compares numbers but {operand!r} is not one",
                   f"write '{op} <number>' or use a string operator such as 's=='")
    if op in (*STRING_OPS, *LIST_OPS, *NUMERIC_OPS) and not operand.strip():
        raise _bad(key, value, f"operator {op!r} has nothing to compare with",
                   f"write '{op} <value>'")
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _parse_hw(key: str, value: str) -> str:
    choices = _HW_CHOICES.get(key)
    if choices is not None and value not in choices:
        raise _bad(key, value, "the value is not one Nova accepts",
                   "use one of " + ", ".join(choices))
    if key in _HW_POSITIVE_INTS and (not _INT.match(value) or int(value) < 1):
        raise _bad(key, value, "it must be a whole number >= 1", f"set it like '{key}=2'")
    if key == "hw:mem_page_size" and value not in _MEM_PAGE_SIZES and not re.match(
            r"^[0-9]+([KMG]i?B?)?$", value):
        raise _bad(key, value, "the page size is not recognised",
                   "use small, large, any, or a size such as 2048, 2MB or 1GB")
    return value


def _assemble_groups(resources: dict[str, dict[str, int]], required: dict[str, set[str]],
                     forbidden: dict[str, set[str]]) -> dict[str, GroupSpec]:
    suffixes = set(resources) | set(required) | set(forbidden)
    return {s: GroupSpec(s, dict(resources.get(s, {})), frozenset(required.get(s, ())),
                         frozenset(forbidden.get(s, ()))) for s in suffixes}


def check_bootable(parsed: ParsedExtraSpecs) -> None:
    """The rules between keys, checked when a server is created (as Nova does), not when
    keys are set one ``openstack flavor set`` at a time: numbered groups need resources, and
    more than one numbered group needs a ``group_policy``."""
    groups, group_policy = parsed.groups, parsed.group_policy
    for group in groups.values():
        if group.suffix and not any(group.resources.values()):
            traits = sorted(group.required_traits | group.forbidden_traits)
            key = f"trait{group.suffix}:{traits[0]}" if traits else f"resources{group.suffix}"
            raise _bad(key, "", f"request group {group.suffix!r} asks for no resources",
                       f"add 'resources{group.suffix}:<CLASS>=<amount>' (e.g. "
                       f"resources{group.suffix}:VGPU=1) or move the trait to the unsuffixed "
                       "'trait:' group")
    numbered = [g for g in groups.values() if g.suffix]
    if len(numbered) > 1 and group_policy is None:
        raise BadRequest(
            f"Flavor has {len(numbered)} numbered request groups but no 'group_policy': "
            "Placement needs to know whether they may share a provider; set "
            "'group_policy=isolate' (different providers, e.g. two pGPUs) or "
            "'group_policy=none'.", code="compute.flavor.extra_spec_invalid")
