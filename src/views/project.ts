/**
 * The one projector of the record's views: a view's keys, in its schema's order, copied from the record, except the
 * few a view computes. A field added to a view's schema is then in its output with no builder to edit, and a key
 * that is undefined is left out, as `JSON.stringify` would leave it out.
 */

/** Anything with a zod object's `shape` (typed loosely so this file loads no schema library). */
export interface ViewShape {
  shape: Record<string, unknown>;
}

export function project<T>(view: ViewShape, record: object, computed: { [K in keyof T]?: T[K] } = {}): T {
  const from = record as Record<string, unknown>;
  const own = computed as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(view.shape)) {
    const value = Object.hasOwn(own, key) ? own[key] : from[key];
    if (value !== undefined) out[key] = value;
  }
  return out as T;
}
