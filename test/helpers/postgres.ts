/**
 * A real PostgreSQL server for tests: Debian's binaries
 * (/usr/lib/postgresql/<version>/bin, the `postgresql` package; .ci/run
 * installs it), a fresh data directory in a temp dir initialised as the
 * `postgres` user when running as root, listening on loopback on a free
 * port with its socket in the temp dir (the processes run with the
 * postgres user's uid, like `runuser -u postgres`, so signals reach them). stop() shuts it down and removes
 * everything. A missing installation fails with a message saying so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

export interface TestPostgres {
  port: number;
  /** A URL for a database made for the caller (fresh, empty). */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const ROOT = '/usr/lib/postgresql';

function binDir(): string {
  const versions = existsSync(ROOT) ? readdirSync(ROOT).filter((v) => existsSync(join(ROOT, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a)) : [];
  if (!versions.length) throw new Error(`PostgreSQL is not installed: no ${ROOT}/<version>/bin/postgres. Install it with "apt-get install -y postgresql" (.ci/run does).`);
  return join(ROOT, versions[0], 'bin');
}


function postgresUser(): { uid?: number; gid?: number } {
  const id = (flag: string) => spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' });
  const uid = id('-u');
  if (uid.status !== 0) throw new Error('running as root, but there is no "postgres" user to run PostgreSQL as (the postgresql package creates it)');
  return { uid: Number(uid.stdout.trim()), gid: Number(id('-g').stdout.trim()) };
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'forge-pg-'));
  const data = join(dir, 'data');
  // Postgres refuses to run as root: as root, the data dir and the processes belong to the postgres user.
  const user = process.getuid?.() === 0 ? postgresUser() : {};
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid!);

  const initResult = spawnSync(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'], { encoding: 'utf8', ...user, cwd: dir });
  if (initResult.status !== 0) throw new Error(`initdb failed (${initResult.status}): ${initResult.stderr || initResult.error?.message}`);

  let child: ChildProcess | undefined;
  let port = 0;
  for (let attempt = 0; attempt < 5 && !child; attempt++) {
    port = await freePort();
    const candidate = spawn(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=300'], { stdio: ['ignore', 'pipe', 'pipe'], ...user, cwd: dir });
    let output = '';
    const ready = await new Promise<boolean>((resolve) => {
      const onData = (d: Buffer) => {
        output += d.toString();
        if (output.includes('ready to accept connections')) resolve(true);
      };
      candidate.stdout!.on('data', onData);
      candidate.stderr!.on('data', onData);
      candidate.once('exit', () => resolve(false));
      setTimeout(() => resolve(false), 30_000).unref();
    });
    if (ready) child = candidate;
    else {
      candidate.kill('SIGKILL');
      if (!/could not bind|Address already in use/.test(output)) throw new Error(`postgres did not start:\n${output}`);
    }
  }
  if (!child) throw new Error('postgres did not start: no free port found');
  const server = child;
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));

  const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (server.exitCode === null) server.kill('SIGINT'); // fast shutdown
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (server.exitCode === null) server.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
