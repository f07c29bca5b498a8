"""The composition root: subcommands of the vgpucloud command."""
