// Signing secrets: made here, shown to the client once, kept in the database only encrypted (AES-256-GCM under the
// service's key, bound to the endpoint's id), opened by the workers to sign. docs/webhooks.md#security.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 1;

/** A new secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** version (1 byte) | nonce (12) | tag (16) | ciphertext; the endpoint id is authenticated data. */
export function sealSecret(key: Buffer, endpointId: string, secret: string): Buffer {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, cipher.getAuthTag(), body]);
}

/** The secret, or an error when the box was not sealed with this key for this endpoint. */
export function openSecret(key: Buffer, endpointId: string, box: Buffer): string {
  if (box.length < 29 || box[0] !== VERSION) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, box.subarray(1, 13));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(box.subarray(13, 29));
  return Buffer.concat([decipher.update(box.subarray(29)), decipher.final()]).toString('utf8');
}
