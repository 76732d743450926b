/**
 * An injected clock for the chaos suite: preloaded with `node --import <this file's URL>`, it moves the process's
 * wall clock (`Date.now()`, `new Date()`, `Date()`) by `ONETAP_CHAOS_CLOCK_OFFSET_MS` milliseconds (negative: behind),
 * as a machine whose clock drifted. The monotonic clock (`performance.now()`, `process.hrtime`) and timers are left
 * alone, as they are on such a machine. Nothing but the test's worker processes load it.
 */
const offset = Number(process.env.ONETAP_CHAOS_CLOCK_OFFSET_MS ?? '0');

if (Number.isFinite(offset) && offset !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  const Skewed = function (this: unknown, ...args: unknown[]) {
    if (!new.target) return new RealDate(realNow() + offset).toString();
    return args.length === 0
      ? new RealDate(realNow() + offset)
      : new (RealDate as unknown as new (...a: unknown[]) => Date)(...args);
  } as unknown as DateConstructor;
  Object.setPrototypeOf(Skewed, RealDate);
  Object.defineProperty(Skewed, 'prototype', { value: RealDate.prototype });
  Object.defineProperty(Skewed, 'now', { value: () => realNow() + offset, writable: true, configurable: true });
  globalThis.Date = Skewed;
}

export {};
