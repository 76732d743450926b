/** URL facts the curation rules share. */

/** `host[:port]`, lower-cased; the default port is dropped by URL itself. Null for a bad URL. */
export function hostOf(url: string): string | null {
  try {
    return new URL(url.trim()).host.toLowerCase() || null;
  } catch {
    return null;
  }
}

/** The app's normalisation: trim, strip trailing slashes, lower-case. */
export function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}

/** 127.0.0.0/8, ::1 and localhost: the only places `--allow-http` opens. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const h = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
  } catch {
    return false;
  }
}
