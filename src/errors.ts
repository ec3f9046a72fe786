/** Exit codes of the CLI (docs/apis.md "Exit codes"). */
export const EXIT = { ok: 0, failed: 1, usage: 2, breaks: 3 } as const;

/** Base of the project's named errors: a stable code, an exit code, and the I/O cause if any. */
export class AppError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT.failed,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad configuration or usage: exit 2, one line per problem. */
export class ConfigError extends AppError {
  constructor(readonly problems: string[]) {
    super('CONFIG_INVALID', problems.join('\n'), EXIT.usage);
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** A report that cannot be written: unknown run, or a run without a period. */
export class ReportError extends AppError {
  constructor(message: string) {
    super('REPORT', message, EXIT.failed);
  }
}
