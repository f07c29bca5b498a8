"""The mount table rows of the Compute, image and identity services, for ``make_app``::

    make_app(settings, placement_store,
             extra_mounts=compute_mounts(settings, SqlComputeStore(engine), placement_store))
"""

from __future__ import annotations

from vgpucloud.api.app import Mount
from vgpucloud.api.compute.handlers.root import versions_app
from vgpucloud.api.compute.routes import ROUTES
from vgpucloud.api.compute.service import ComputeService
from vgpucloud.api.compute.versions import MAX_VERSION, MIN_VERSION
from vgpucloud.api.identity import identity_app
from vgpucloud.api.image.service import ImageService
from vgpucloud.api.image.service import versions_app as image_versions_app
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore


def compute_mounts(settings: Settings, store: ComputeApiStore,
                   placement: PlacementStore) -> list[Mount]:
    compute_versions = {"min_version": str(MIN_VERSION), "max_version": str(MAX_VERSION)}
    return [
        Mount("/compute/v2.1", "compute", ComputeService(settings, store, placement, ROUTES),
              compute_versions),
        Mount("/compute", "compute-versions", versions_app, {}),
        Mount("/image/v2", "image", ImageService(settings, store, placement), {}),
        Mount("/image", "image-versions", image_versions_app, {}),
        Mount("/identity", "identity", identity_app, {}),
    ]
