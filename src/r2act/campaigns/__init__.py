"""Campaign manifests: the strict manifest model, its loader, the planner and Chaos Mesh rendering.

Pure: reads a manifest file and returns typed models; never touches a cluster."""
