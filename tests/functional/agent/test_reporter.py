"""The provider-tree reporter's own promises: an unchanged tree costs one GET, and a pGPU
whose device is gone and that holds nothing is deleted (and forgotten)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from vgpucloud.agent.provider_tree import DesiredTree, ProviderSpec
from vgpucloud.agent.reporter import ProviderReporter
from vgpucloud.client.placement import PlacementClient

VGPU = {"VGPU": {"total": 16, "reserved": 0, "min_unit": 1, "max_unit": 16, "step_size": 1,
                 "allocation_ratio": 1.0}}


class CountingTransport(httpx.BaseTransport):
    def __init__(self, app: Any) -> None:
        self.inner = httpx.WSGITransport(app=app)
        self.requests: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(f"{request.method} {request.url.path}")
        return self.inner.handle_request(request)


def _tree(*children: str) -> DesiredTree:
    specs = tuple(ProviderSpec(f"h1_pci_{c}", VGPU, frozenset({"CUSTOM_MDEV_NVIDIA_35"}), c)
                  for c in children)
    return DesiredTree(ProviderSpec("h1", {}, frozenset()), specs,
                       frozenset(s.name for s in specs))


def test_an_unchanged_tree_costs_one_get(api_app: Any, tmp_path: Path) -> None:
    transport = CountingTransport(api_app)
    reporter = ProviderReporter(PlacementClient("http://api/placement", transport=transport),
                                tmp_path)
    first = reporter.report(_tree("0000_84_00_0", "0000_85_00_0"))
    assert not first.unchanged and len(first.created) == 3
    transport.requests.clear()

    again = reporter.report(_tree("0000_84_00_0", "0000_85_00_0"))

    assert again.unchanged
    assert transport.requests == ["GET /placement/resource_providers"]


def test_a_gone_unused_pgpu_is_deleted_and_its_traits_forgotten(api_app: Any,
                                                                tmp_path: Path) -> None:
    client = PlacementClient("http://api/placement", transport=httpx.WSGITransport(app=api_app))
    reporter = ProviderReporter(client, tmp_path)
    reporter.report(_tree("0000_84_00_0", "0000_85_00_0"))
    gone = client.list_providers(name="h1_pci_0000_85_00_0")[0]["uuid"]

    result = reporter.report(_tree("0000_84_00_0"))

    assert result.deleted == ["h1_pci_0000_85_00_0"]
    assert client.get_provider(gone) is None
    assert gone not in json.loads((tmp_path / "placement.json").read_text())["traits"]
