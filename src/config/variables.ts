/** The names of the environment variables an account reads its sources from: the one place that knows them, so the
 * loader reads them and every hint (config problems, `doctor`, HTTP errors) names them alike.
 */
import type { ApiName } from '../domain/index.js';
import { listText } from '../util/words.js';

/** The source variables of an account, unprefixed (PARTNER_API_URL, ...): read once per account, under its prefix. */
export const SOURCE_ENV = [
  'PARTNER_API_URL',
  'PARTNER_PUBLIC_KEY',
  'PARTNER_PRIVATE_KEY',
  'EXCHANGE_API_URL',
  'EXCHANGE_API_TOKEN',
] as const;

/** The prefix of an account's environment variables: its name in capitals, non-alphanumerics as "_" ("ACME_EU_"). */
export function envPrefix(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_`;
}

/** The variables one account reads, as it reads them (BETA_EXCHANGE_API_URL for account beta of `accounts`). */
export interface SourceVariables {
  partner: { url: string; publicKey: string; privateKey: string };
  exchange: { url: string; token: string };
}

/** The source variables under a prefix ('' for a single-account config). */
export function variablesWithPrefix(prefix: string): SourceVariables {
  return {
    partner: {
      url: `${prefix}PARTNER_API_URL`,
      publicKey: `${prefix}PARTNER_PUBLIC_KEY`,
      privateKey: `${prefix}PARTNER_PRIVATE_KEY`,
    },
    exchange: { url: `${prefix}EXCHANGE_API_URL`, token: `${prefix}EXCHANGE_API_TOKEN` },
  };
}

/**
 * The source variables an account's config was read from: prefixed by the account's name in a config of `accounts`,
 * unprefixed otherwise.
 */
export function sourceVariables(config: { multiAccount: boolean; account: string }): SourceVariables {
  return variablesWithPrefix(config.multiAccount ? envPrefix(config.account) : '');
}

/** An API's variables in words, URL first: "BETA_EXCHANGE_API_URL and BETA_EXCHANGE_API_TOKEN". */
export function apiVariablesText(variables: SourceVariables, api: ApiName): string {
  return listText(Object.values(variables[api]));
}
