"""The benchmark harness: ``python -m bench`` (``make bench``); see docs/performance.md."""
