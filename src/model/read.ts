/** Small readings of the record that the prober, the policy and the pages share (pure, no schema library). */
import type { StepName } from './words.js';

/** A run's exchange of one step (the record's, or the prober's live one). */
export function stepOf<E extends { step: StepName }>(run: { steps: readonly E[] }, step: StepName): E | undefined {
  return run.steps.find((s) => s.step === step);
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/** Low-level error codes of a failed TLS handshake (Node's and OpenSSL's). */
export function isTlsCode(code: string): boolean {
  return TLS_CODE.test(code);
}
