// The probe keys of the onetap action: the environment variables a catalog's probeHeaders name and the key rule
// permits (src/catalog/key-env.ts: never the store's or the CI's own, a *_TOKEN/_PASSWORD/_URL name only when
// policy.keyEnv lists it, with policy.keyEnv only what it lists), one per line.
//
//   node key-names.mjs <catalog>
//
// run.sh masks their values in the log and hands the refresh these variables and no other of the job's
// environment. A catalog that cannot be read prints nothing (the refresh then says why).
import { readFileSync } from 'node:fs';
import { keyEnvRefusal } from '../dist/src/catalog/key-env.js';

let catalog;
try { catalog = JSON.parse(readFileSync(process.argv[2], 'utf8')); } catch { process.exit(0); }
const keyEnv = Array.isArray(catalog?.policy?.keyEnv) ? catalog.policy.keyEnv.filter((e) => typeof e === 'string') : undefined;
const names = new Set();
for (const s of Array.isArray(catalog?.servers) ? catalog.servers : []) {
  // Keys are read for requiresAuth entries only (src/attest/keys.ts targetOf).
  if (s?.requiresAuth !== true || typeof s.probeHeaders !== 'object' || s.probeHeaders === null) continue;
  for (const h of Object.values(s.probeHeaders)) if (typeof h?.env === 'string' && keyEnvRefusal(h.env, keyEnv) === null) names.add(h.env);
}
for (const name of names) console.log(name);
