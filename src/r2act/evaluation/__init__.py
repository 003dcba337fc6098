"""Offline evaluation: scoring, metrics, error taxonomy, bootstrap statistics, comparison.

Reads a dataset and predictions; never imports the cluster package."""
