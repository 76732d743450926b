/** The small value types of the record, each with the words a validation problem uses for it. */
import { z } from 'zod';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** An ISO time in UTC (`2026-12-02T04:12:10.000Z`): what records are keyed and sorted by. */
export const isoTime = z
  .string()
  .regex(ISO_UTC, 'an ISO time (UTC)')
  .refine((v) => Number.isFinite(Date.parse(v)), 'an ISO time (UTC)');
/** A snapshot hash: 16 hex digits. */
export const snapshotHash = z.string().regex(/^[0-9a-f]{16}$/, 'a snapshot hash (16 hex digits)');
/** A SHA-256 in hex. */
export const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 (64 hex digits)');
/** A whole number >= 0. */
export const count = z.number().int().min(0);
/** A duration in ms (or any measure that is never negative). */
export const duration = z.number().min(0);
