"""Quality gate: checks over raw incidents that return Problems, grouping, record building.

Reads files only; never imports the cluster package."""
