/** `ramp-recon serve-webhooks`: the HTTP server that receives the partner's webhooks. */
import { firstStopSignal } from '../../schedule/signals.js';
import { COMMAND_INFO } from './info.js';
import type { Command } from 'commander';
import { action, createContext, openMigratedStore } from '../context.js';
import { startWebhookServer } from '../../webhooks/server.js';
import { ConfigError } from '../../errors.js';

interface ServeOptions {
  port?: string;
  host?: string;
}

export function register(program: Command): void {
  program
    .command('serve-webhooks')
    .description(COMMAND_INFO['serve-webhooks'].description)
    .option('--port <port>', 'port to listen on (default: webhooks.port, 8080)')
    .option('--host <host>', 'address to bind (default: webhooks.host, 0.0.0.0)')
    .action(
      action(async (opts: ServeOptions, command: Command) => {
        const { config, logger } = createContext(command);
        let port: number | undefined;
        if (opts.port !== undefined) {
          port = Number(opts.port);
          if (!Number.isInteger(port) || port < 0 || port > 65535)
            throw new ConfigError([`--port: must be a port number 0-65535 (got ${JSON.stringify(opts.port)})`]);
        }
        const store = await openMigratedStore(config, logger);
        let server;
        try {
          server = await startWebhookServer({ store, config, logger }, { port, host: opts.host });
        } catch (err) {
          await store.close();
          throw err;
        }
        // Each organisation registers its own URL with the partner: a multi-account config takes only these paths.
        const perAccount = config.multiAccount ? server.accounts.map((a) => `  account ${a.account}: ${a.url}\n`) : [];
        process.stderr.write(`receiving webhooks on ${server.url}\n${perAccount.join('')}`);
        // First signal: stop accepting, finish in-flight requests (their events are committed
        // before they are acknowledged), close the store. Second signal: leave at once.
        const { stopped, uninstall } = firstStopSignal({
          logger,
          graceful: 'stopping the webhook receiver (requests in flight finish)',
        });
        await stopped;
        uninstall();
        try {
          await server.close();
        } finally {
          await store.close();
        }
        process.stderr.write(`webhook receiver stopped: ${JSON.stringify(server.stats())}\n`);
      }),
    );
}
