/** A self-signed certificate for a test's HTTPS receiver, made with the machine's openssl. */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** Whether openssl is installed: without it the HTTPS cases are left out. */
export const hasOpenssl = spawnSync('openssl', ['version']).status === 0;

/** Writes a one-day certificate for localhost and its key into `dir`: the receiver's webhooks.tlsCertFile/tlsKeyFile. */
export function selfSignedCert(dir: string): { tlsCertFile: string; tlsKeyFile: string } {
  const tlsCertFile = join(dir, 'cert.pem');
  const tlsKeyFile = join(dir, 'key.pem');
  const made = spawnSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', tlsKeyFile, '-out', tlsCertFile, '-days', '1'].concat([
      '-subj',
      '/CN=localhost',
    ]),
    { stdio: 'ignore' },
  );
  if (made.status !== 0) throw new Error('openssl could not make a self-signed certificate');
  return { tlsCertFile, tlsKeyFile };
}
