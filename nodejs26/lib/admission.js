// Admission by queueing delay, as funcwsgi/serving/admission.py decides it (the same algorithm and
// constants; docs/servers.md#admission). nodejs26 serves every call on its event loop, so a
// call starts at once and its queueing delay is the loop's lag, measured every LAG_TICK_MS:
// while every lag measured over a whole INTERVAL (CoDel's test) stood at or past
// SERVER_QUEUE_TARGET, a new call gets 503 with Retry-After at once, until a lag under the
// target is seen again. With `servers` > 0 (threads, in funcwsgi) the wait of a call that
// finds them all busy is predicted from Little's law; kept here so both runtimes hold the
// same tested code.

/** CoDel's interval, in seconds. */
export const INTERVAL = 0.1;
/** The prediction aims this far under the target (funcwsgi's AIM). */
export const AIM = 0.9;
/** Weight of the newest call in the smoothed service time. */
export const SMOOTHING = 0.1;
/** How often the loop's lag is measured: five times per interval. */
export const LAG_TICK_MS = 20;

const seconds = () => performance.now() / 1000;
const ignore = () => {};

export class Admission {
  /**
   * @param {number} target SERVER_QUEUE_TARGET, seconds
   * @param {number} servers calls served at once; 0 on an event loop
   * @param {{clock?: () => number, interval?: number, record?: (seconds: number) => void}} options
   */
  constructor(target, servers = 0, { clock = seconds, interval = INTERVAL, record = ignore } = {}) {
    this.target = target;
    this.servers = servers;
    this.clock = clock;
    this.interval = interval;
    this.record = record;
    this.service = 0;
    this.aboveSince = null;
    this.standing = false;
    this.delay = 0;
  }

  /** A queueing delay measured now: a call's wait at its start, or the loop's lag. */
  observe(delay) {
    this.delay = delay;
    if (delay < this.target) {
      this.aboveSince = null;
      this.standing = false;
      return;
    }
    const now = this.clock();
    if (this.aboveSince === null) this.aboveSince = now;
    else if (now - this.aboveSince >= this.interval) this.standing = true;
  }

  /** A call arrives with `inflight` others admitted and not finished: false to refuse it at once. */
  admit(inflight) {
    if (!this.servers) return !this.standing;
    const ahead = inflight - this.servers;
    if (ahead < 0) return true;
    if (this.standing) return false;
    return (ahead + 1) * this.service <= AIM * this.target * this.servers;
  }

  /** A call leaves the queue after `waited` seconds: false when it waited past the target. */
  start(waited) {
    this.observe(waited);
    this.record(waited);
    return waited <= this.target;
  }

  /** A call held its server `held` seconds. */
  finished(held) {
    this.service = this.service ? this.service + SMOOTHING * (held - this.service) : held;
  }

  /** Measure the loop's lag every LAG_TICK_MS (a timer that keeps no process alive); returns a stop function. */
  measureLag() {
    let due = performance.now() + LAG_TICK_MS;
    const timer = setInterval(() => {
      const now = performance.now();
      this.observe(Math.max(0, now - due) / 1000);
      due = now + LAG_TICK_MS;
    }, LAG_TICK_MS).unref();
    return () => clearInterval(timer);
  }
}
