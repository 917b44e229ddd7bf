"""Test doubles importable by tests and benchmarks: the loopback fake vendor server."""

from collectors.testing.fake_server import FakeVendorServer, Fault, ReceivedRequest

__all__ = ["FakeVendorServer", "Fault", "ReceivedRequest"]
