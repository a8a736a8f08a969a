"""Benchmarks: plain scripts measuring mm-tui against a baseline run in the same process."""
