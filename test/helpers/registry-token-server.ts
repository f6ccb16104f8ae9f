/**
 * A token service for docker-registry's token auth (the distribution spec's
 * Bearer flow): the registry answers 401 with `WWW-Authenticate: Bearer
 * realm=<this>,service=...,scope=...`, the client asks this server for a
 * token with Basic credentials, and the registry checks the token's ES256
 * signature against the certificate in its rootcertbundle (x5c header).
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey, randomUUID, sign, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type TestServer } from './http-server.ts';
import { tempDir } from './project.ts';

export interface TokenService {
  realm: string;
  service: string;
  issuer: string;
  /** The certificate the registry trusts (rootcertbundle). */
  certFile: string;
  /** How many tokens were issued (the test checks the flow ran). */
  issued(): number;
  server: TestServer;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

export async function startTokenService(user: string, password: string): Promise<TokenService> {
  const dir = tempDir('forge-token-');
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=forge-test-token'], { stdio: 'ignore' });
  const key = createPrivateKey(readFileSync(keyFile));
  const certDer = new X509Certificate(readFileSync(certFile)).raw;
  const service = 'forge-test-registry';
  const issuer = 'forge-test-issuer';
  let issued = 0;
  const server = await startServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
      return;
    }
    const access = url.searchParams.getAll('scope').map((scope) => {
      const [type, name, actions] = scope.split(':');
      return { type, name, actions: actions.split(',') };
    });
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', x5c: [certDer.toString('base64')] }));
    const claims = b64url(JSON.stringify({ iss: issuer, sub: user, aud: url.searchParams.get('service'), iat: now, nbf: now - 60, exp: now + 300, jti: randomUUID(), access }));
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), { key, dsaEncoding: 'ieee-p1363' });
    issued++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token: `${header}.${claims}.${b64url(signature)}`, expires_in: 300 }));
  });
  return { realm: `${server.url}/token`, service, issuer, certFile, issued: () => issued, server };
}
