/**
 * Loads a CommonJS file with V8's code cache: the bytecode of every function
 * the last run compiled, so a process compiles almost nothing before it
 * works. Node 20 has no compile cache of its own (module.enableCompileCache
 * is 22.1+), and there this takes about a sixth off every command; on later
 * lines it does the same job, the same way on every line. Two programs use
 * it:
 *
 * - the compiled CLI (dist/forge-cli.cjs), with the `.cjs` files it requires
 *   from dist/ (the prebuilt libraries), its cache kept in Forge's cache;
 * - a built bundle's runtime core (forge-runtime.cjs, core-loader.ts), its
 *   cache kept beside it in the bundle.
 *
 * V8 accepts cached data for a script of the same length compiled by the
 * same V8 with the same flags: it does not compare the text, and runs the
 * bytecode it was given. So each cache is filed under what pins the text
 * (the CLI: Forge's version and the file's size, mtime and inode; the core:
 * the sha256 of its bytes, which survives a copy into an image) as well as
 * Node's version and architecture — a rebuilt or upgraded program never
 * runs another build's bytecode — and V8 refuses data that does not fit its
 * version or flags. The core's cache files also carry the sha256 of their
 * data: V8 crashes on damaged data. Refused or missing data is written anew
 * by save(), through a temp file of its own. A
 * cache is trusted as the place it lives is: whoever can write Forge's cache
 * can write the runtime core it keeps, and whoever can write a bundle's
 * cache can write the bundle's code.
 */
import { isAscii } from 'node:buffer';
import { type BigIntStats, closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, type Module } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileIdentity } from './file-identity.ts';

/** Cache files not written for this long are removed when another is written (other installs, other Node versions). */
const DAY_MS = 24 * 60 * 60 * 1000;
const UNUSED_MS = 30 * DAY_MS;
const SUFFIX = '.v8cache';

export interface CachedModule {
  exports: unknown;
  /** What the cache did for this load: used, or missing or refused (then `save` writes one); off without a cache folder. */
  cache: 'used' | 'missing' | 'refused' | 'off';
  /** Writes the caches that were missing or refused (this file's and those of the files it required), with the functions compiled so far. */
  save(): void;
}

/**
 * Loads `file` as a CommonJS module, compiled with the code cache kept in
 * `cacheDir`; `version` is the program's (Forge's). The `.cjs` files it
 * requires from its own folder (dist/: the prebuilt libraries, ajv alone
 * about 10 ms to compile) are compiled the same way, each with its cache;
 * anything else (node: modules, packages) goes through Node's require.
 *
 * A cache holds the functions compiled by the time it was written: those
 * of the run that wrote it, not those another run calls, which that run
 * compiles from source every time. `variant` (the CLI's command:
 * command-names.ts) keeps a set of caches per kind of run; it must be a
 * short name from a closed set, as each one is a file per loaded file.
 */
export function loadWithCodeCache(file: string, cacheDir: string, version: string, variant?: string): CachedModule {
  // No checksum: forge help and the like keep node:crypto unloaded (fast-path.test.ts), and the cache is this user's, on this machine.
  return loadCached(file, cacheDir, { pin: (_bytes, stat) => `${version}-${fileIdentity(stat)}`, place: 'path', variant });
}

/**
 * Loads `file` as loadWithCodeCache does, its cache filed under the sha256
 * of its bytes instead of its stat, and under its path within its own
 * folder, not its absolute path: a bundle is copied (into an image, onto
 * another machine, to another folder) with its cache, and a copy keeps its
 * bytes and its layout, not its inode or its place. `cacheDir` belongs to
 * the folder (a bundle's .code-cache/). Without one it compiles without a
 * cache, and save() does nothing.
 */
export function loadWithContentCache(file: string, cacheDir: string | undefined): CachedModule {
  const digest = sha256Of(file);
  return loadCached(file, cacheDir, { pin: (bytes) => digest(bytes).toString('hex', 0, 16), place: 'folder', digest });
}

/**
 * Loads `bytes`, the text of `file` its caller has read and checked against
 * the sha256 it was built with (`sha256`, hex: a bundle's prebuilt modules,
 * runtime/vendor/vendor-file.ts), as loadWithContentCache loads a file: its
 * cache in `cacheDir` filed under that sha256, so only those bytes ever run
 * its bytecode. Compiled from the bytes given, never read again: a file
 * swapped after the check is not what runs.
 */
export function loadCheckedWithContentCache(file: string, bytes: Buffer, sha256: string, cacheDir: string | undefined): CachedModule {
  return loadCached(file, cacheDir, { pin: () => sha256.slice(0, 32), place: 'folder', digest: sha256Of(file) }, bytes);
}

interface CacheNaming {
  /** What pins a file's text in its cache's name, from its bytes and its stat. */
  pin(bytes: Buffer, stat: BigIntStats): string;
  /** Which path of the file names its cache: the absolute one (a cache shared by many installs), or the one within the loaded file's folder. */
  place: 'path' | 'folder';
  /** The kind of run the caches are for (loadWithCodeCache's variant), if it keeps more than one set. */
  variant?: string;
  /**
   * Given, each cache file carries this digest of its data, checked before V8 sees it (V8 checks none in a release
   * build, and crashes on damaged data): for a cache that many processes, in many containers, may share.
   */
  digest?: Digest;
}

/** `given`: the main file's text, already read (its stat is then not read, and the pin must not need it). */
function loadCached(file: string, cacheDir: string | undefined, naming: CacheNaming, given?: Buffer): CachedModule {
  const root = dirname(file);
  // Required here, not imported: the fast path's file holds this module, and a cached build needs no node:module.
  const { Module: NodeModule } = createRequire(file)('node:module') as typeof import('node:module');
  const loaded = new Map<string, { module: Module; cache: CachedModule['cache']; save(): void }>();
  const { digest } = naming;
  const compile = (path: string, bytes?: Buffer) => {
    const module = new NodeModule(path);
    module.filename = path;
    const name = cacheName(naming.place === 'path' ? path : relative(root, path), path, naming.variant);
    const { script, cache, cacheFile } = compileWithCache(path, cacheDir, naming.pin, name.prefix, digest, (source) => NodeModule.wrap(source), bytes);
    const save = () => {
      if (cacheFile !== undefined && (cache === 'missing' || cache === 'refused')) writeCache(cacheFile, name, () => (digest ? withHeader(script.createCachedData(), digest) : script.createCachedData()));
    };
    // Before it runs, as Node's own require does: a cycle gets the exports made so far.
    loaded.set(path, { module, cache, save });
    const run = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
    run.call(module.exports, module.exports, requireFrom(path), module, path, dirname(path));
    return loaded.get(path)!;
  };
  const requireFrom = (from: string): NodeJS.Require => {
    const nodeRequire = createRequire(from);
    // Text its caller checked: what it requires was not checked with it, so nothing it requires is compiled under its pin.
    if (given) return nodeRequire;
    const require = (id: string) => {
      const own = id.startsWith('.') ? resolve(dirname(from), id) : undefined;
      if (own === undefined || !own.endsWith('.cjs') || !own.startsWith(root + sep)) return nodeRequire(id);
      return (loaded.get(own) ?? compile(own)).module.exports;
    };
    return Object.assign(require, nodeRequire) as NodeJS.Require;
  };
  const main = compile(file, given);
  return {
    exports: main.module.exports,
    cache: main.cache,
    save: () => {
      for (const entry of loaded.values()) entry.save();
    },
  };
}

/**
 * The file compiled (as `wrap` wraps a module's source) with its cache, if it has one that fits: named by the
 * text's pin, read in the same open; or, `given`, its text as the caller read it (the pin then takes no stat).
 */
function compileWithCache(file: string, cacheDir: string | undefined, pin: CacheNaming['pin'], prefix: string, digest: Digest | undefined, wrap: (source: string) => string, given?: Buffer) {
  const { bytes, stat } = given ? { bytes: given, stat: undefined } : readWithStat(file);
  // ASCII (esbuild escapes the rest) decodes as latin1 into a one-byte string, a third of the time UTF-8 takes.
  const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const cacheFile = cacheDir === undefined ? undefined : join(cacheDir, `${prefix}${pin(bytes, stat!)}${SUFFIX}`);
  let cacheBytes: Buffer | undefined;
  try {
    if (cacheFile !== undefined) cacheBytes = readFileSync(cacheFile);
  } catch {
    // none yet
  }
  // Damaged data (a torn or flipped file) would crash V8, which checks no checksum of its own in a release build.
  const cachedData = cacheBytes && (digest ? intactData(cacheBytes, digest) : cacheBytes);
  // node:vm is required here, not imported with this module: the fast path (fast-path.ts) loads this
  // module with the rest of its file, and compiling node:vm cost a cached build a few tenths of a millisecond.
  const { Script } = createRequire(file)('node:vm') as typeof import('node:vm');
  const script = new Script(wrap(source), { filename: file, cachedData });
  const cache: CachedModule['cache'] = cacheFile === undefined ? 'off' : cacheBytes === undefined ? 'missing' : cachedData === undefined || script.cachedDataRejected ? 'refused' : 'used';
  return { script, cache, cacheFile };
}

/** One open: the stat and bytes that name a cache are those of the text compiled. */
function readWithStat(file: string): { bytes: Buffer; stat: BigIntStats } {
  const fd = openSync(file, 'r');
  try {
    return { stat: fstatSync(fd, { bigint: true }), bytes: readFileSync(fd) };
  } finally {
    closeSync(fd);
  }
}

/**
 * A cache's name: `<file>[+<variant>]-<path hash>-node<version>-<arch>-<flags>-<pin>.v8cache`.
 * Everything before the pin (`prefix`) is the same for every build of this
 * file (`name`: its path, absolute or within its folder) run by this Node
 * under these flags, for this variant of run. V8 refuses a cache made under
 * other flags, so a run with Node options (a NODE_OPTIONS in one shell and
 * not in another) files its cache under V8's own tag for its flags, instead
 * of refusing and rewriting the other's on every switch. node:v8 is loaded
 * only then.
 */
interface CacheName {
  prefix: string;
  /** Whether `other` (a file name in the cache folder) is a cache of the same file, Node and flags as `cacheFile`, for any variant, made from another text: an older build's, which no run can use again. */
  olderBuild(other: string, cacheFile: string): boolean;
}

function cacheName(name: string, file: string, variant: string | undefined): CacheName {
  // FNV-1a: a short, stable name for the path, without loading node:crypto.
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  const flags = process.execArgv.length > 0 || process.env.NODE_OPTIONS ? (createRequire(file)('node:v8') as typeof import('node:v8')).cachedDataVersionTag().toString(16) : 'default';
  const head = basename(file);
  const tail = `-${(hash >>> 0).toString(16).padStart(8, '0')}-node${process.version}-${process.arch}-${flags}-`;
  const prefix = `${head}${variant === undefined ? '' : `+${variant}`}${tail}`;
  return {
    prefix,
    olderBuild: (other, cacheFile) => {
      if (!other.startsWith(head)) return false;
      // The variant between the file's name and the tail, if any (variant names are lowercase words joined by -).
      const at = other.indexOf(tail, head.length);
      if (at < 0 || !/^(?:\+[a-z-]+)?$/.test(other.slice(head.length, at))) return false;
      return other.slice(at + tail.length) !== basename(cacheFile).slice(prefix.length);
    },
  };
}

/**
 * A checked cache file is V8's data behind a header: MAGIC, then the sha256 of the
 * data (native, with the CPU's SHA instructions: a fraction of a millisecond
 * for a megabyte). It guards against damage, not against a writer: whoever
 * can write the cache can write the code it is for.
 */
const MAGIC = Buffer.from('FGC1');
const DIGEST_BYTES = 32;
const HEADER_BYTES = MAGIC.byteLength + DIGEST_BYTES;

type Digest = (data: Uint8Array) => Buffer;

/** sha256, with node:crypto required on first use (the CLI's fast path loads it only to read or write a cache). */
function sha256Of(file: string): Digest {
  let hash: typeof import('node:crypto').createHash | undefined;
  return (data) => (hash ??= (createRequire(file)('node:crypto') as typeof import('node:crypto')).createHash)('sha256').update(data).digest();
}

/** The V8 data in a cache file, or undefined if the file is not one this module wrote whole. */
function intactData(file: Buffer, digest: Digest): Buffer | undefined {
  if (file.byteLength < HEADER_BYTES || !file.subarray(0, MAGIC.byteLength).equals(MAGIC)) return undefined;
  const data = file.subarray(HEADER_BYTES);
  return digest(data).equals(file.subarray(MAGIC.byteLength, HEADER_BYTES)) ? data : undefined;
}

function withHeader(data: Buffer, digest: Digest): Buffer {
  return Buffer.concat([MAGIC, digest(data), data]);
}

/**
 * Writes the cache, and removes older builds' caches of the same file (of
 * every variant) and any cache nobody wrote for UNUSED_MS. The data is made
 * only once its file is open: a read-only place (a bundle in an image) costs
 * a failed open, not the few milliseconds V8 takes to serialize, on every
 * start.
 */
function writeCache(cacheFile: string, name: CacheName, data: () => Buffer): void {
  const dir = dirname(cacheFile);
  try {
    mkdirSync(dir, { recursive: true });
    // Its own temp file (a process in another container sharing the folder can have the same pid), made by this open.
    const temp = `${cacheFile}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
    const fd = openSync(temp, 'wx');
    try {
      writeFileSync(fd, data());
    } finally {
      closeSync(fd);
    }
    renameSync(temp, cacheFile);
    for (const entry of readdirSync(dir)) {
      const other = join(dir, entry);
      if (other === cacheFile) continue;
      const age = Date.now() - statSync(other).mtimeMs;
      // A .tmp a day old is one whose writer was killed before its rename.
      const stale = entry.endsWith(SUFFIX) ? name.olderBuild(entry, cacheFile) || age > UNUSED_MS : entry.endsWith('.tmp') && age > DAY_MS;
      if (stale) rmSync(other, { force: true });
    }
  } catch {
    // A read-only or full cache: the next command compiles as this one did.
  }
}
