"""The simulated Online Boutique cluster: an in-process, seeded digital twin on a virtual clock."""
