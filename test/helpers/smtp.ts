/** A mail relay for the tests, on 127.0.0.1, that keeps what it takes. */
import { SMTPServer } from 'smtp-server';

export interface Mailbox {
  /** Each message taken, raw (latin1: one character per byte). */
  mails: string[];
  /** The size in bytes of each message refused for its size. */
  refused: number[];
  listen(port: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A relay without login that takes every message; with `size`, its EHLO states SIZE and it refuses a larger message
 * after DATA with 552 5.3.4, as Postfix does; with `login`, it takes messages only after AUTH with that user and
 * password (over plain SMTP: a relay on loopback).
 */
export function mailbox(options: { size?: number; login?: { user: string; pass: string } } = {}): Mailbox {
  const mails: string[] = [];
  const refused: number[] = [];
  const { login } = options;
  const server = new SMTPServer({
    ...(options.size ? { size: options.size } : {}),
    authOptional: !login,
    ...(login
      ? {
          allowInsecureAuth: true,
          onAuth(auth, _session, callback) {
            if (auth.username === login.user && auth.password === login.pass) callback(null, { user: login.user });
            else callback(new Error('535 5.7.8 bad credentials'));
          },
        }
      : {}),
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (d: Buffer) => chunks.push(d));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          refused.push(raw.length);
          const err = new Error('5.3.4 Message size exceeds fixed limit') as Error & { responseCode: number };
          err.responseCode = 552;
          callback(err);
          return;
        }
        mails.push(raw.toString('latin1'));
        callback();
      });
    },
  });
  let listening = false;
  return {
    mails,
    refused,
    listen: (port) =>
      new Promise<void>((resolve) =>
        server.listen(port, '127.0.0.1', () => {
          listening = true;
          resolve();
        }),
      ),
    close: () => (listening ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve()),
  };
}
