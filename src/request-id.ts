// Request ids: `req_` and 12 random bytes in hex, in the logs, the X-Request-Id header and every error envelope.
import { randomBytes } from 'node:crypto';

const ID_HEX = 24;
/** The bytes are drawn from the CSPRNG 512 ids at a time: one randomBytes call per request costs more CPU. */
let idPool = '';
let idAt = 0;
export function newRequestId() {
  if (idAt === idPool.length) {
    idPool = randomBytes((ID_HEX / 2) * 512).toString('hex');
    idAt = 0;
  }
  idAt += ID_HEX;
  return `req_${idPool.slice(idAt - ID_HEX, idAt)}`;
}
