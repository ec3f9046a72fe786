/** What the process's environment says beyond the config: who runs it, whether npm started it, whether debug output is
 * asked for. With load.ts, the only module that reads process.env (docs/architecture.md).
 */

/** The OS user from the environment, when the system cannot tell (no passwd entry in a container): '' if unknown. */
export function envUserName(env: NodeJS.ProcessEnv = process.env): string {
  return (env.USER ?? env.LOGNAME ?? '').trim();
}

/** npm started this process (npx, npm run, npm exec): npm sets npm_command in its children's environment. */
export function startedByNpm(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.npm_command);
}

/** LOG_LEVEL=debug: an unexpected error's stack is printed too (before any config is loaded, so read here). */
export function debugRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.LOG_LEVEL === 'debug';
}
