"""Test doubles of the vendors, for tests and benchmarks (not shipped: the package is not in the
wheel). The loopback web site the demo's live extraction fetches is product code, in
collectors/extraction/live/loopback_site.py."""

from tests.fakes.fake_server import FakeVendorServer, Fault, ReceivedRequest

__all__ = ["FakeVendorServer", "Fault", "ReceivedRequest"]
