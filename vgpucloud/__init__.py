"""vgpucloud: a cloud control plane for virtual GPUs."""
