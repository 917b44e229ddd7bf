"""Benchmark collectors: plan work, call systems, append events. Import only `warehouse`."""
