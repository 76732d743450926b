/** A value made on first use (schema compilers: every CLI start would otherwise pay for them). */
export function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}
