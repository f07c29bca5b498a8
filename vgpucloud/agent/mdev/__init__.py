"""Mediated devices over sysfs: the kernel's nouns and the ``Sysfs`` seam.

Imports only ``vgpucloud.errors`` and the stdlib (DESIGN.md section 3).
"""

from vgpucloud.agent.mdev.model import Mdev, MdevType, ParentDevice, ParentKind
from vgpucloud.agent.mdev.sysfs import HostKernel, Kernel, Sysfs

__all__ = ["HostKernel", "Kernel", "Mdev", "MdevType", "ParentDevice", "ParentKind", "Sysfs"]
