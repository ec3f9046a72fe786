/** The quarantine reason of a record that failed its zod schema: "field: message; field: message". */
import type { z } from 'zod';

/**
 * One "path: message" per issue, zod's "Invalid input: " prefix dropped. `missing`: the text the
 * API's schemas give an absent field ("(got nothing)"); with 'required' such an issue reads
 * "path: required", as the partner's quarantine reasons have always said.
 */
export function formatZodIssues(error: z.ZodError, options: { missing?: 'as-reported' | 'required' } = {}): string {
  const required = options.missing === 'required';
  return error.issues
    .map((i) => {
      const path = i.path.map(String).join('.') || '(record)';
      if (required && (i.message.endsWith(`(got ${NOTHING})`) || i.message.includes('received undefined')))
        return `${path}: required`;
      return `${path}: ${i.message.replace(/^Invalid input: /, '')}`;
    })
    .join('; ');
}

/** How showWireValue names an absent value. */
export const NOTHING = 'nothing';
