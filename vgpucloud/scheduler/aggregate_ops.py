"""Nova's extra-spec operators for ``aggregate_instance_extra_specs`` (AggregateInstance-
ExtraSpecsFilter semantics): does an aggregate metadata value satisfy a flavor's wanted
value? Wanted values and what they mean::

    "t4"                 the metadata value is exactly "t4"
    "= 4"                numeric, value >= 4 (Nova's historical meaning of "=")
    "== 4" "!= 4" ">= 4" "<= 4"           numeric comparisons
    "s== t4" "s!= t4" "s< b" "s<= b" "s> b" "s>= b"   string comparisons
    "<in> nvidia"        the value contains "nvidia"
    "<all-in> a b"       the value contains every word
    "<or> t4 <or> m60"   the value is one of the words
"""

from __future__ import annotations

import operator
from collections.abc import Callable

_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "=": operator.ge, "==": operator.eq, "!=": operator.ne, ">=": operator.ge,
    "<=": operator.le,
}
_STRING: dict[str, Callable[[str, str], bool]] = {
    "s==": operator.eq, "s!=": operator.ne, "s<": operator.lt, "s<=": operator.le,
    "s>": operator.gt, "s>=": operator.ge,
}


def matches(value: str, wanted: str) -> bool:
    """``matches("t4", "<or> t4 <or> m60")`` is True; ``matches("8", ">= 16")`` is False."""
    words = wanted.split()
    if not words:
        return value == wanted
    op, rest = words[0], words[1:]
    if op == "<or>":
        return value in [w for w in rest if w != "<or>"]
    if op == "<in>" and rest:
        return " ".join(rest) in value
    if op == "<all-in>" and rest:
        return all(word in value for word in rest)
    if op in _STRING and rest:
        return _STRING[op](value, " ".join(rest))
    if op in _NUMERIC and rest:
        try:
            return _NUMERIC[op](float(value), float(rest[0]))
        except ValueError:
            return False
    return value == wanted
