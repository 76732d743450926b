/** Options merged over defaults, where an option left `undefined` keeps its default. */
export function withDefaults<D extends object, O extends object>(defaults: D, options: O): D & O {
  return { ...defaults, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) } as D & O;
}
