"""Baseline methods that write predictions files.

Floors (random, majority), keyword, rule, naive Bayes and the gold-RCA + mapper control."""
