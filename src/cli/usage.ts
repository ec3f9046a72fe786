/** Usage errors in one line: commander's message and its "did you mean", then where the help is. */

/**
 * "error: unknown option '--form'\n(Did you mean --from?)\n" ->
 * "ramp-recon: error: unknown option '--form' (did you mean --from?); see ramp-recon run --help\n"
 */
export function usageLine(text: string, command?: string): string {
  const parts = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => l.replace(/^error:\s*/, '').replace(/^\(Did you mean/, '(did you mean'));
  return `ramp-recon: error: ${parts.join(' ')}; see ramp-recon ${command ? `${command} ` : ''}--help\n`;
}
