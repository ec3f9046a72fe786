/** Where a JSON text stops being JSON, as "line L, column C: what is wrong", for config errors. */
import { parse } from 'lossless-json';

/**
 * The first syntax error of a text that JSON.parse refused, with its line and column (1-based).
 * lossless-json's parser names the position on every error (Node's JSON.parse does not always).
 */
export function jsonSyntaxProblem(text: string): string {
  try {
    parse(text);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /at position (\d+)/.exec(message);
    const reason = message.replace(/\s*at position \d+\s*$/, '').replace(/\s*\(char \d+\)\s*$/, '');
    if (at) {
      const { line, column } = lineColumn(text, Number(at[1]));
      return `not valid JSON at line ${line}, column ${column}: ${reason}`;
    }
    return `not valid JSON: ${reason}`;
  }
  return 'not valid JSON';
}

/** 1-based line and column of a character offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  return { line, column };
}
