"""Simulated GPU hosts: a sysfs tree under a root directory and a fake kernel driving it.

See ``vgpucloud.sim.host`` for the entry point and ``vgpucloud.sim.kernel`` for the rules.
"""

from vgpucloud.sim.host import SimHost, kernel_for
from vgpucloud.sim.kernel import FakeKernel, is_simulated
from vgpucloud.sim.profiles import PROFILES, GpuProfile, profile

__all__ = ["PROFILES", "FakeKernel", "GpuProfile", "SimHost", "is_simulated", "kernel_for",
           "profile"]
