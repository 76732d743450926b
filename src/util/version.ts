/**
 * onetap's version: what `--version` prints and what every record names as its probe's (test: equals package.json's).
 */
export const ONETAP_VERSION = '0.4.0';
