"""Live replay: validity gate, re-injection, plan execution, health window, restore, report."""
