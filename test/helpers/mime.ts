/** Reading a raw e-mail as an SMTP server receives it from nodemailer: headers, decoded text parts, attachments. */

/** A header's value, folded lines joined. */
export function header(raw: string, name: string): string {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const m = new RegExp(`^${name}: (.*)$`, 'im').exec(head);
  return m ? m[1]! : '';
}

interface Part {
  headers: string;
  body: string;
}

function parts(raw: string): Part[] {
  const out: Part[] = [];
  const boundaries = [...raw.matchAll(/boundary="?([^";\r\n]+)"?/g)].map((m) => m[1]!);
  for (const boundary of boundaries)
    for (const part of raw.split(`--${boundary}`)) {
      const split = part.indexOf('\r\n\r\n');
      if (split >= 0) out.push({ headers: part.slice(0, split), body: part.slice(split + 4) });
    }
  return out;
}

/** The decoded bytes of the MIME part whose filename is `name` (nodemailer encodes attachments in base64). */
export function attachment(raw: string, name: string): { bytes: Buffer; headers: string } {
  const part = parts(raw).find((p) => /Content-Disposition: attachment/i.test(p.headers) && p.headers.includes(name));
  if (!part) throw new Error(`no attachment ${name} in the message`);
  if (!/Content-Transfer-Encoding: base64/i.test(part.headers)) throw new Error(`attachment ${name} is not base64`);
  return { bytes: Buffer.from(part.body.replace(/\s+/g, ''), 'base64'), headers: part.headers };
}

/** The decoded text of the first part of this content type (text/plain, text/html), quoted-printable or base64 or plain. */
export function textPart(raw: string, contentType: string): string {
  const part = parts(raw).find(
    (p) =>
      new RegExp(`Content-Type: ${contentType}`, 'i').test(p.headers) &&
      !/Content-Disposition: attachment/i.test(p.headers),
  );
  if (!part) throw new Error(`no ${contentType} part in the message`);
  const body = part.body.replace(/\r\n$/, '');
  if (/Content-Transfer-Encoding: quoted-printable/i.test(part.headers))
    return Buffer.from(
      body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  if (/Content-Transfer-Encoding: base64/i.test(part.headers))
    return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}
