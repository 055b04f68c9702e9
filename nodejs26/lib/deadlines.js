// The call timeout without a timer per call: the calls waiting for their answer
// sit in one list in deadline order (every call gets the same timeout, so a new
// call always goes last), and one interval checks the front. Adding and removing
// a call is a few pointer writes; a timer per call costs more than the rest of a
// hello world's call path. The 408 comes at most one tick (1/20 of the timeout,
// 10 to 250 ms) after the deadline.

export class Deadlines {
  constructor(seconds, onExpired) {
    this.ms = seconds * 1000;
    this.onExpired = onExpired;
    this.head = null;
    this.tail = null;
    this.tick = Math.min(250, Math.max(10, this.ms / 20));
    this.timer = setInterval(() => this.sweep(performance.now()), this.tick);
    this.timer.unref();
  }

  /** Time `call` from `now` (performance.now(), which the caller has read already). */
  add(call, now) {
    call.deadline = now + this.ms;
    call.before = this.tail;
    call.after = null;
    if (this.tail === null) this.head = call;
    else this.tail.after = call;
    this.tail = call;
  }

  remove(call) {
    if (call.deadline === Infinity) return;
    call.deadline = Infinity;
    if (call.before === null) this.head = call.after;
    else call.before.after = call.after;
    if (call.after === null) this.tail = call.before;
    else call.after.before = call.before;
    call.before = null;
    call.after = null;
  }

  sweep(now) {
    while (this.head !== null && this.head.deadline <= now) {
      const call = this.head;
      this.remove(call);
      this.onExpired(call);
    }
  }

  stop() {
    clearInterval(this.timer);
  }
}
