"""The exception tree of vgpucloud, and the stable error codes the APIs expose.

Every error a user can see says three things: the thing, the cause and the fix.
The tree::

    VgpucloudError                         code: vgpucloud.error
    ├── ConfigError                        a setting is wrong; ``problems`` lists each one
    ├── NotFound                           404
    │   └── ResourceProviderNotFound       placement.resource_provider.not_found
    ├── BadRequest                         400
    │   ├── QueryDuplicateKey              placement.query.duplicate_key
    │   ├── QueryBadValue                  placement.query.bad_value
    │   └── QueryMissingValue              placement.query.missing_value
    ├── Conflict                           409
    │   ├── ConcurrentUpdate               placement.concurrent_update
    │   ├── DuplicateName                  placement.duplicate_name
    │   ├── InventoryInUse                 placement.inventory.inuse
    │   ├── ProviderInUse                  placement.resource_provider.inuse
    │   └── CannotDeleteParent             placement.resource_provider.cannot_delete_parent
    ├── Forbidden                          403
    ├── DatabaseUnavailable                503 the database server cannot be reached or used
    └── HostDeviceError                    the kernel refused, or would refuse, an mdev operation
        ├── InvalidDeviceName              a PCI address, type id or UUID failed validation
        ├── ParentGone                     the parent device is not (or no longer) in sysfs
        ├── TypeNotOffered                 the parent does not offer that mdev type
        ├── NoInstancesLeft                available_instances is 0 for that type on that parent
        ├── MdevNotFound                   no mdev with that UUID
        ├── MdevExists                     an mdev with that UUID already exists
        ├── MdevBusy                       the mdev is held by a guest; the kernel refuses remove
        └── MdevClaimConflict              the ledger holds that mdev for another instance

Codes are part of the API contract: clients match on them, so never change one.
HTTP layers map classes to statuses through ``http_status``; nothing below ``api``
knows about HTTP.
"""

from __future__ import annotations

from collections.abc import Sequence


class VgpucloudError(Exception):
    """Base of every error vgpucloud raises on purpose."""

    code: str = "vgpucloud.error"
    http_status: int = 500

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class ConfigError(VgpucloudError):
    """One or more settings are wrong. Each problem names the option, the value and the fix."""

    code = "vgpucloud.config"

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{len(self.problems)} configuration problem(s):\n{lines}")


# --- 404 ---------------------------------------------------------------------


class NotFound(VgpucloudError):
    code = "placement.undefined_code"
    http_status = 404


class ResourceProviderNotFound(NotFound):
    code = "placement.resource_provider.not_found"


# --- 400 ---------------------------------------------------------------------


class BadRequest(VgpucloudError):
    code = "placement.undefined_code"
    http_status = 400


class QueryDuplicateKey(BadRequest):
    code = "placement.query.duplicate_key"


class QueryBadValue(BadRequest):
    code = "placement.query.bad_value"


class QueryMissingValue(BadRequest):
    code = "placement.query.missing_value"


# --- 403 ---------------------------------------------------------------------


class Forbidden(VgpucloudError):
    code = "placement.undefined_code"
    http_status = 403


# --- 409 ---------------------------------------------------------------------


class Conflict(VgpucloudError):
    code = "placement.undefined_code"
    http_status = 409


class ConcurrentUpdate(Conflict):
    """A compare-and-swap on a provider or consumer generation lost a race.

    Clients re-read the state and retry; they never ignore it.
    """

    code = "placement.concurrent_update"


class DuplicateName(Conflict):
    code = "placement.duplicate_name"


class InventoryInUse(Conflict):
    code = "placement.inventory.inuse"


class ProviderInUse(Conflict):
    code = "placement.resource_provider.inuse"


class CannotDeleteParent(Conflict):
    code = "placement.resource_provider.cannot_delete_parent"


# --- 503 ---------------------------------------------------------------------


class DatabaseUnavailable(VgpucloudError):
    """The database named by ``[database] connection`` cannot be reached or used."""

    code = "vgpucloud.database_unavailable"
    http_status = 503


# --- host devices ------------------------------------------------------------


class HostDeviceError(VgpucloudError):
    """An mdev operation that the kernel refused, or that we refused before asking it."""

    code = "host.device"


class InvalidDeviceName(HostDeviceError):
    code = "host.device.invalid_name"


class ParentGone(HostDeviceError):
    code = "host.device.parent_gone"


class TypeNotOffered(HostDeviceError):
    code = "host.device.type_not_offered"


class NoInstancesLeft(HostDeviceError):
    code = "host.device.no_instances_left"


class MdevNotFound(HostDeviceError):
    code = "host.device.mdev_not_found"


class MdevExists(HostDeviceError):
    code = "host.device.mdev_exists"


class MdevBusy(HostDeviceError):
    code = "host.device.mdev_busy"


class MdevClaimConflict(HostDeviceError):
    code = "host.device.claim_conflict"
