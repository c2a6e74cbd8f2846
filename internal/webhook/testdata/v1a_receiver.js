// A Standard Webhooks v1a receiver written from the specification's text with Node's
// built-in crypto alone (no code of this project), to cross-check its ed25519 signatures.
//
//   node v1a_receiver.js vectors FILE   verifies every vector of FILE under each public key
//   node v1a_receiver.js serve whpk_…   listens on 127.0.0.1 (a free port, printed as
//                                       "listening on URL"), answers 204 to a delivery
//                                       that verifies, 401 to any other
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');

const TOLERANCE_SECONDS = 5 * 60;

// publicKey reads a whpk_ text: base64 of the 32 bytes of an ed25519 public key.
function publicKey(text) {
  if (!text.startsWith('whpk_')) throw new Error('not a whpk_ key');
  const raw = Buffer.from(text.slice('whpk_'.length), 'base64');
  if (raw.length !== 32) throw new Error('a whpk_ key is 32 bytes');
  return crypto.createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') } });
}

// verify: one of the space-delimited v1a signatures is the ed25519 signature of
// "{id}.{timestamp}.{payload}" under key; signatures of other versions are ignored.
function verify(key, id, timestamp, payload, header) {
  const content = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(payload)]);
  for (const sig of header.split(' ')) {
    const comma = sig.indexOf(',');
    if (comma < 0 || sig.slice(0, comma) !== 'v1a') continue;
    const raw = Buffer.from(sig.slice(comma + 1), 'base64');
    if (raw.length === 64 && crypto.verify(null, content, key, raw)) return true;
  }
  return false;
}

function vectors(file) {
  const vs = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const v of vs) {
    for (const pk of v.public_keys) {
      if (!verify(publicKey(pk), v.id, String(v.timestamp), Buffer.from(v.payload, 'utf8'), v.signature)) {
        console.error(`vector ${JSON.stringify(v.name)}: no signature verifies under ${pk}`);
        process.exit(1);
      }
    }
    const other = crypto.generateKeyPairSync('ed25519').publicKey;
    if (verify(other, v.id, String(v.timestamp), Buffer.from(v.payload, 'utf8'), v.signature)) {
      console.error(`vector ${JSON.stringify(v.name)}: verified under an unrelated key`);
      process.exit(1);
    }
  }
  console.log(`${vs.length} vectors verified`);
}

function serve(text) {
  const key = publicKey(text);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const payload = Buffer.concat(chunks);
      const id = req.headers['webhook-id'];
      const ts = req.headers['webhook-timestamp'];
      const sig = req.headers['webhook-signature'];
      const now = Math.floor(Date.now() / 1000);
      const ok = typeof id === 'string' && typeof ts === 'string' && typeof sig === 'string' &&
        /^[0-9]+$/.test(ts) && Math.abs(now - Number(ts)) <= TOLERANCE_SECONDS &&
        verify(key, id, ts, payload, sig);
      res.writeHead(ok ? 204 : 401);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${server.address().port}/`);
  });
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'vectors') vectors(arg);
else if (mode === 'serve') serve(arg);
else {
  console.error('usage: v1a_receiver.js vectors FILE | serve whpk_…');
  process.exit(2);
}
