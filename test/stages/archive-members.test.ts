/**
 * The bundle archive: one gzip member per entry, the large ones kept in
 * Forge's cache. The archive is the same bytes with the cache, without it and
 * with --no-cache; every common reader reads it whole; a cached member that
 * does not hash to its digest is never used.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import tarStream from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const ARCHIVE = 'test-agent-1.0.0.tgz';

function project(): string {
  return writeProject({
    'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n  - file_read\n'),
    'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: read\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    return args["message"]\n',
    'tools/shout.ts': '/**\n * Tool: shout\n * Description: Upper-cases a message.\n * Tags: read\n *\n * Input:\n *   message (str): The message.\n */\nexport function execute(args: { message: string }) { return args.message.toUpperCase(); }\n',
  });
}

async function buildArchive(dir: string, cacheDir: string, args: string[] = []): Promise<Buffer> {
  const built = await forge(['build', '--prod', ...args], dir, { FORGE_CACHE_DIR: cacheDir });
  expect(built.code, built.stderr).toBe(0);
  return readFileSync(join(dir, '.forge-output', ARCHIVE));
}

const members = (cacheDir: string) => readdirSync(join(cacheDir, 'archive-members')).sort();

/** The output's files (but the archive), by path. */
function outputFiles(dir: string): Map<string, Buffer> {
  const out = join(dir, '.forge-output');
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
    if (entry.isFile() && !entry.name.endsWith('.tgz')) files.set(join(entry.parentPath, entry.name).slice(out.length + 1), readFileSync(join(entry.parentPath, entry.name)));
  }
  return files;
}

describe('the bundle archive', () => {
  it('is the same bytes with members from the cache, with an empty cache and with --no-cache', async () => {
    const cacheDir = tempDir('forge-cache-');
    const [a, b] = [project(), project()];
    const fresh = await buildArchive(a, cacheDir);
    // The core's files (forge-runtime.cjs, vendor/) were kept, one member each; the project's were not.
    const kept = members(cacheDir);
    const coreFiles = [...outputFiles(a).keys()].filter((path) => path === 'forge-runtime.cjs' || path.startsWith('vendor/'));
    expect(kept.length).toBe(coreFiles.length);
    expect(coreFiles.length).toBeGreaterThanOrEqual(2);
    const cached = await buildArchive(b, cacheDir);
    expect(cached.equals(fresh)).toBe(true);
    expect(members(cacheDir)).toEqual(kept);
    expect((await buildArchive(b, cacheDir, ['--no-cache'])).equals(fresh)).toBe(true);
    expect((await buildArchive(b, tempDir('forge-empty-cache-'))).equals(fresh)).toBe(true);
  });

  it('never keeps the project\'s own files, however large: each edit would leave one more behind', async () => {
    const cacheDir = tempDir('forge-cache-');
    const dir = project();
    const big = (n: number) => `/**\n * Tool: big\n * Description: Returns a large text.\n * Tags: read\n */\nexport function execute() { return ${JSON.stringify(`${n}`.repeat(100_000))}; }\n`;
    writeFileSync(join(dir, 'tools', 'big.ts'), big(1));
    await buildArchive(dir, cacheDir);
    const kept = members(cacheDir);
    expect(statSync(join(dir, '.forge-output', 'runtime.mjs')).size).toBeGreaterThan(64 * 1024);
    writeFileSync(join(dir, 'tools', 'big.ts'), big(2));
    const archive = await buildArchive(dir, cacheDir);
    expect(members(cacheDir)).toEqual(kept);
    expect(gunzipSync(archive).includes('2'.repeat(1000))).toBe(true);
  });

  it('drops members no build used for 30 days when it keeps a new one, and keeps those a build uses', async () => {
    const cacheDir = tempDir('forge-cache-');
    await buildArchive(project(), cacheDir);
    const kept = members(cacheDir);
    const old = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    // A member of a build long gone, and the ones this project uses, all last touched 31 days ago.
    const gone = join(cacheDir, 'archive-members', `${'0'.repeat(64)}.gz`);
    writeFileSync(gone, 'x');
    for (const name of [...kept, `${'0'.repeat(64)}.gz`]) utimesSync(join(cacheDir, 'archive-members', name), old, old);
    // Another set of builtins: a new core, so a new member is kept and the unused ones are dropped;
    // the vendor files it shares with the first project are used, so they stay.
    const other = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n  - math_calculate\n') });
    await buildArchive(other, cacheDir);
    const after = members(cacheDir);
    expect(after).not.toContain(`${'0'.repeat(64)}.gz`);
    const shared = kept.filter((name) => after.includes(name));
    expect(shared.length).toBeGreaterThan(0);
    for (const name of shared) expect(statSync(join(cacheDir, 'archive-members', name)).mtimeMs).toBeGreaterThan(old.getTime() + 24 * 60 * 60 * 1000);
  });

  it('is read whole by tar, Python\'s tarfile and Node\'s gunzip, entry for entry', async () => {
    const dir = project();
    const archive = await buildArchive(dir, tempDir('forge-cache-'));
    const archivePath = join(dir, '.forge-output', ARCHIVE);
    const files = outputFiles(dir);

    const extracted = tempDir('forge-extract-');
    execFileSync('tar', ['xzf', archivePath, '-C', extracted]);
    for (const [path, data] of files) expect(readFileSync(join(extracted, path)).equals(data), path).toBe(true);

    const python = 'import hashlib, json, sys, tarfile\nwith tarfile.open(sys.argv[1]) as t:\n    print(json.dumps({m.name: hashlib.sha256(t.extractfile(m).read()).hexdigest() for m in t.getmembers()}))';
    const listed = JSON.parse(execFileSync('python3', ['-c', python, archivePath], { encoding: 'utf8' })) as Record<string, string>;
    const sha = (data: Buffer) => execFileSync('sha256sum', { input: data, encoding: 'utf8' }).split(' ')[0];
    expect(Object.keys(listed).sort()).toEqual([...files.keys()].sort());
    for (const [path, data] of files) expect(listed[path], path).toBe(sha(data));

    // Node reads every member: the tar stream ends with its two zero blocks, after every entry's bytes.
    const tar = gunzipSync(archive);
    expect(tar.subarray(tar.length - 1024).every((byte) => byte === 0)).toBe(true);
    expect(tar.length).toBeGreaterThan([...files.values()].reduce((sum, data) => sum + data.length, 0));
  });

  it('never uses a cached member that does not hash to its digest, and keeps a good one in its place', async () => {
    const cacheDir = tempDir('forge-cache-');
    const dir = project();
    const fresh = await buildArchive(dir, cacheDir);
    // Every kept member replaced by a well-formed gzip of other bytes: it would put other code in the archive.
    const planted = gzipSync(Buffer.from('console.log("planted")\n'));
    for (const name of members(cacheDir)) {
      const file = join(cacheDir, 'archive-members', name);
      const digest = readFileSync(file).subarray(0, 32);
      writeFileSync(file, Buffer.concat([digest, planted]));
    }
    rmOutputCache(dir);
    const rebuilt = await buildArchive(dir, cacheDir);
    expect(await tarEntries(rebuilt)).toEqual(await tarEntries(fresh)); // names the entry that differs, if one does
    expect(rebuilt.equals(fresh)).toBe(true);
    expect(gunzipSync(rebuilt).includes('console.log("planted")')).toBe(false);
    // Compressed again and written back in their place: the next build reads good members.
    for (const name of members(cacheDir)) expect(readFileSync(join(cacheDir, 'archive-members', name)).subarray(32).equals(planted)).toBe(false);
  });
});

/** Each entry of a .tgz: its header's fields that the archive fixes, and the sha256 of its bytes. */
async function tarEntries(archive: Buffer): Promise<Record<string, string>> {
  const entries: Record<string, string> = {};
  const extract = tarStream.extract();
  extract.on('entry', (header, stream, next) => {
    const hash = createHash('sha256');
    stream.on('data', (chunk: unknown) => void hash.update(chunk as Buffer));
    stream.on('end', () => {
      entries[header.name] = `${header.mode?.toString(8)} ${header.mtime?.toISOString()} ${header.uid}:${header.gid} ${hash.digest('hex')}`;
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => extract.on('finish', () => resolve()).on('error', reject));
  extract.end(gunzipSync(archive));
  await done;
  return entries;
}

/** A build with the project's own cache gone (so it builds, and archives, again). */
function rmOutputCache(dir: string): void {
  execFileSync('rm', ['-rf', join(dir, '.forge'), join(dir, '.forge-output')]);
}
