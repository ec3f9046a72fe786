/** `ramp-recon verify <closeId> [--json]` and `verify --audit` (docs/closing.md "Verify"): exit 0 when the close's
 * records (or the audit chain) are as signed, 1 listing what changed.
 */
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.js';
import { action, createContext, openMigratedStore } from '../context.js';
import { verifyClose } from '../../stages/close-verify.js';
import { checkAuditChain } from '../../store/workflow/audit-log.js';

export function register(program: Command): void {
  program
    .command('verify')
    .description(COMMAND_INFO['verify'].description)
    .argument('[closeId]', 'the close, as `ramp-recon closes` lists it')
    .option('--audit', 'check the audit log chain instead and name its first broken link')
    .option('--json', 'print the result as JSON')
    .action(
      action(async (closeId: string | undefined, opts: { audit?: boolean; json?: boolean }, command: Command) => {
        if (!opts.audit && closeId === undefined) throw new ConfigError(['verify: give a close id, or --audit']);
        if (opts.audit && closeId !== undefined)
          throw new ConfigError([
            `verify --audit checks the whole log: give no close id (got ${JSON.stringify(closeId)})`,
          ]);
        const { config, logger } = createContext(command);
        const store = await openMigratedStore(config, logger);
        try {
          if (opts.audit) {
            const { rows, broken } = await checkAuditChain(store.db);
            if (opts.json) process.stdout.write(`${JSON.stringify({ rows, intact: broken === null, broken })}\n`);
            else
              process.stdout.write(
                broken === null
                  ? `audit log intact: ${rows} row(s), every link holds\n`
                  : `audit log broken at row ${broken.seq}: ${broken.reason}\n`,
              );
            return broken === null ? EXIT.ok : EXIT.failed;
          }
          const v = await verifyClose(store, closeId!);
          const ok = v.unchanged && v.workbook === 'unchanged';
          if (opts.json)
            process.stdout.write(
              `${JSON.stringify({ closeId: v.close.id, account: v.close.account, period: v.close.period, unchanged: v.unchanged, signedDigest: v.close.digest, digest: v.digest, workbook: v.workbook, changes: v.changes }, null, 2)}\n`,
            );
          else {
            const head = `close ${v.close.id} (${v.close.account}, ${v.close.period.from} to ${v.close.period.to}, signed by ${v.close.by})`;
            const lines = v.unchanged
              ? [`${head}: unchanged since sign-off (digest ${v.digest})`]
              : [
                  `${head}: ${v.changes.length} change(s) since sign-off (digest was ${v.close.digest}, now ${v.digest})`,
                  ...v.changes.map(
                    (c) => `  ${c.stream} ${c.id} ${c.field}: ${c.before ?? '(none)'} -> ${c.after ?? '(none)'}`,
                  ),
                ];
            if (v.workbook !== 'unchanged')
              lines.push(`  signed workbook ${v.close.workbook}: ${v.workbook} since sign-off`);
            process.stdout.write(`${lines.join('\n')}\n`);
          }
          return ok ? EXIT.ok : EXIT.failed;
        } finally {
          await store.close();
        }
      }),
    );
}
