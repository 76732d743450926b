/** Small readings of the record that the prober, the policy and the pages share (pure, no schema library). */
import type { ClientRun, Exchange } from './evidence.js';
import type { StepName } from './words.js';

export function stepOf(run: Pick<ClientRun, 'steps'>, step: StepName): Exchange | undefined {
  return run.steps.find((s) => s.step === step);
}

/** The first step of a run: initialize, else server/discover, else whatever came first. */
export const firstStep = (run: Pick<ClientRun, 'steps'>): Exchange | undefined => stepOf(run, 'initialize') ?? stepOf(run, 'server/discover') ?? run.steps[0];

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;

/** Low-level error codes of a failed TLS handshake (Node's and OpenSSL's). */
export function isTlsCode(code: string): boolean {
  return TLS_CODE.test(code);
}
