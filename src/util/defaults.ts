/** Options merged over defaults, where an option left `undefined` keeps its default. */
export function withDefaults<D extends object, O extends object>(defaults: D, options: O): D & O {
  const out = { ...defaults } as Record<string, unknown>;
  for (const key in options) {
    const value = options[key];
    if (value !== undefined) out[key] = value;
  }
  return out as D & O;
}
