-- wrk calls done() once after a run; print the numbers as one JSON line so the
-- harness reads exact microseconds instead of wrk's rounded, unit-suffixed text.
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    'BENCH-JSON {"requests": %d, "duration_us": %d, "status_errors": %d, "connect_errors": %d, '
      .. '"read_errors": %d, "write_errors": %d, "timeouts": %d, "p50_us": %d, "p99_us": %d, "mean_us": %.1f}\n',
    summary.requests, summary.duration, errors.status, errors.connect, errors.read, errors.write,
    errors.timeout, latency:percentile(50), latency:percentile(99), latency.mean))
end
