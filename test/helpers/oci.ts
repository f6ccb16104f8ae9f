/**
 * Real container parts for image tests: Debian's docker-registry on a
 * loopback port, a small base image assembled with umoci from this machine's
 * node, python3, bubblewrap and shells (and the shared libraries they load),
 * pushed with skopeo, and runc to start what `forge package` made.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onFileEnd } from './file-cleanup.ts';
import { tempDir } from './project.ts';

const running: ChildProcess[] = [];
onFileEnd(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

export interface LoopbackRegistry {
  /** host:port */
  address: string;
  /** Stops the registry and resolves once it has exited. */
  stop(): Promise<void>;
}

/** `token`: require the distribution spec's token auth, with tokens from this service. */
export async function startRegistry(options: { token?: { realm: string; service: string; issuer: string; certFile: string } } = {}): Promise<LoopbackRegistry> {
  const dir = tempDir('forge-registry-');
  const config = join(dir, 'config.yml');
  const t = options.token;
  const auth = t ? `auth:\n  token:\n    realm: ${t.realm}\n    service: ${t.service}\n    issuer: ${t.issuer}\n    rootcertbundle: ${t.certFile}\n` : '';
  writeFileSync(config, `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\n  delete:\n    enabled: true\nhttp:\n  addr: 127.0.0.1:0\nlog:\n  level: info\n${auth}`);
  const child = spawn('docker-registry', ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let output = '';
  const address = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`docker-registry did not start:\n${output}`)), 30_000);
    const onData = (d: Buffer) => {
      output += d;
      const m = /listening on (127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`docker-registry exited with ${code}:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    address,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The files an executable needs: itself and what ldd says it loads. */
function withLibraries(executable: string): string[] {
  const files = [executable];
  const ldd = execFileSync('ldd', [executable], { encoding: 'utf8' });
  for (const m of ldd.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) files.push(m[1]);
  return files;
}

/**
 * Left out of the Python standard library: its tests and the tools for
 * writing Python (IDLE, Tk, 2to3, ensurepip), compiled bytecode, and
 * config-3.N-*, the static libpython and Makefile for compiling C
 * extensions (25 MB of the 39, and nothing a venv or a tool runs needs).
 */
const NOT_IN_IMAGE = /\/(test|tests|idlelib|tkinter|turtledemo|ensurepip|lib2to3|__pycache__|config-\d+\.\d+[^/]*)$/;

function copyInto(rootfs: string, path: string, as = path): void {
  const target = join(rootfs, as);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(realpathSync(path), target, { dereference: true, recursive: true, filter: (src) => !NOT_IN_IMAGE.test(src) });
}

/**
 * Base images assembled once per machine and kept between test files and
 * runs: repacking one costs seconds of CPU, and every file that pushes one
 * would make the same. The name covers what goes in: this file's own text
 * (the recipe), and node and Python with their files' mtimes (an upgrade
 * makes a new image).
 */
const BASE_IMAGES = join(tmpdir(), 'forge-tests-base-images');

/** What a test base image holds besides node. */
export interface BaseImageOptions {
  /** Python 3 (/usr/bin/python3.N with its standard library). Default false. */
  python?: boolean;
  /** The name in /usr/bin that links to python3.N (default python3; `python`: a base with no python3). */
  pythonLink?: 'python3' | 'python';
  /**
   * The tool sandbox's programs, as the generated Dockerfile's apt-get install
   * bubblewrap gives them on a node image: bwrap, prlimit and readlink (the
   * start-up probe's command). Default true.
   */
  sandbox?: boolean;
  /** /bin/sh (dash) and /bin/bash, for YAML tools' bash: and sh: steps. Default false. */
  shells?: boolean;
}

/** The programs a sandbox-ready base has, each with the libraries it loads. */
const SANDBOX_PROGRAMS = ['/usr/bin/bwrap', '/usr/bin/prlimit', '/usr/bin/readlink'];

function baseImageLayout(options: BaseImageOptions): string {
  const python = options.python ?? false;
  const sandbox = options.sandbox ?? true;
  const shells = options.shells ?? false;
  const interpreter = python ? execFileSync('/usr/bin/python3', ['-c', 'import sys; print(sys.executable, sys.version_info[0], sys.version_info[1])'], { encoding: 'utf8' }).trim().split(' ') : undefined;
  const stamp = (file: string) => [file, statSync(realpathSync(file)).mtimeMs];
  const programs = [...(sandbox ? SANDBOX_PROGRAMS : []), ...(shells ? ['/bin/sh', '/bin/bash'] : [])];
  const inputs = [readFileSync(fileURLToPath(import.meta.url), 'utf8'), process.version, stamp(process.execPath), interpreter && [interpreter, stamp(interpreter[0])], programs.map(stamp)];
  const pythonLink = options.pythonLink ?? 'python3';
  const kind = [python ? (pythonLink === 'python3' ? 'python' : `python-as-${pythonLink}`) : 'node', sandbox ? 'bwrap' : 'nobwrap', ...(shells ? ['shells'] : [])].join('-');
  const name = `${kind}-${createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16)}`;
  const layout = join(BASE_IMAGES, name);
  if (existsSync(join(layout, 'index.json'))) return layout;

  const work = tempDir('forge-base-');
  const made = join(work, 'layout');
  const unpacked = join(work, 'bundle');
  execFileSync('umoci', ['init', '--layout', made]);
  execFileSync('umoci', ['new', '--image', `${made}:base`]);
  execFileSync('umoci', ['unpack', '--image', `${made}:base`, unpacked]);
  const rootfs = join(unpacked, 'rootfs');
  for (const file of withLibraries(process.execPath)) copyInto(rootfs, file, file === process.execPath ? '/usr/local/bin/node' : file);
  if (interpreter) {
    const executable = realpathSync(interpreter[0]);
    const version = `${interpreter[1]}.${interpreter[2]}`;
    for (const file of withLibraries(executable)) copyInto(rootfs, file, file === executable ? `/usr/bin/python${version}` : file);
    copyInto(rootfs, `/usr/lib/python${version}`);
    execFileSync('ln', ['-s', `python${version}`, join(rootfs, 'usr/bin', pythonLink)]);
  }
  // Under their own names (/bin/sh is a link to dash here: the image gets dash's file as /bin/sh).
  for (const program of programs) for (const file of withLibraries(realpathSync(program))) copyInto(rootfs, file, file === realpathSync(program) ? program : file);
  // Mount points bwrap needs on a read-only root: a container runtime mounts /proc and /dev over them.
  if (sandbox) for (const dir of ['proc', 'dev']) mkdirSync(join(rootfs, dir), { recursive: true });
  mkdirSync(join(rootfs, 'tmp'), { recursive: true, mode: 0o1777 });
  execFileSync('chmod', ['1777', join(rootfs, 'tmp')]);
  mkdirSync(join(rootfs, 'etc'), { recursive: true });
  writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/false\nnode:x:1000:1000::/workspace:/bin/false\n');
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nnode:x:1000:\n');
  execFileSync('umoci', ['repack', '--image', `${made}:base`, unpacked]);
  execFileSync('umoci', ['config', '--image', `${made}:base`, '--config.env', 'PATH=/usr/local/bin:/usr/bin:/bin']);
  // Another worker may have made the same image meanwhile: the first rename wins, and both are the same.
  mkdirSync(BASE_IMAGES, { recursive: true });
  try {
    renameSync(made, layout);
  } catch (err) {
    if (!existsSync(join(layout, 'index.json'))) throw err;
  }
  // Images of an older recipe, node or Python are never used again: 40 MB each.
  for (const old of readdirSync(BASE_IMAGES)) if (old.slice(0, -17) === kind && old !== name) rmSync(join(BASE_IMAGES, old), { recursive: true, force: true });
  return layout;
}

/**
 * A base image with node (at /usr/local/bin/node, as in the official images),
 * bubblewrap unless `sandbox: false`, and, when asked, Python (/usr/bin/python3.N
 * with its standard library) and shells, pushed to `registry` as base:TAG
 * (default base:1). Returns its reference.
 */
export function pushBaseImage(registry: string, options: BaseImageOptions & { tag?: string } = {}): string {
  const layout = baseImageLayout(options);
  const reference = `${registry}/base:${options.tag ?? '1'}`;
  execFileSync('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci:${layout}:base`, `docker://${reference}`]);
  return reference;
}

/**
 * Base layers unpacked by umoci, one directory per layer digest, kept between
 * test files and runs as the base images are: every image a test unpacks
 * starts with a test base's layer (110 MB of node, Python and libraries), and
 * umoci un-gzipping and writing it cost 2 s of CPU per image, a copy of it 0.3 s.
 */
const BASE_ROOTFS = join(tmpdir(), 'forge-tests-base-rootfs');

/** The layer is a blob of a test base image (assembled by baseImageLayout). */
function isBaseLayer(digest: string): boolean {
  const file = digest.replace(':', '/');
  return existsSync(BASE_IMAGES) && readdirSync(BASE_IMAGES).some((name) => existsSync(join(BASE_IMAGES, name, 'blobs', file)));
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/**
 * Adds to the layout an image of some of `tag`'s layers (the config's diff_ids
 * cut to match, which umoci checks), tagged `as`.
 */
function tagLayers(layout: string, tag: string, as: string, pick: (layers: Descriptor[]) => Descriptor[]): void {
  const blobFile = (digest: string) => join(layout, 'blobs', ...digest.split(':'));
  const writeBlob = (mediaType: string, data: string): Descriptor => {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    writeFileSync(blobFile(digest), data);
    return { mediaType, digest, size: Buffer.byteLength(data) };
  };
  const indexFile = join(layout, 'index.json');
  const index = JSON.parse(readFileSync(indexFile, 'utf8'));
  const at = index.manifests.find((m: { annotations?: Record<string, string> }) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
  const manifest = JSON.parse(readFileSync(blobFile(at.digest), 'utf8'));
  const config = JSON.parse(readFileSync(blobFile(manifest.config.digest), 'utf8'));
  const layers = pick(manifest.layers);
  const picked = layers.map((layer) => manifest.layers.indexOf(layer));
  config.rootfs.diff_ids = picked.map((i) => config.rootfs.diff_ids[i]);
  const configDescriptor = writeBlob(manifest.config.mediaType, JSON.stringify(config));
  const manifestDescriptor = writeBlob(at.mediaType, JSON.stringify({ ...manifest, config: configDescriptor, layers }));
  index.manifests.push({ ...manifestDescriptor, annotations: { 'org.opencontainers.image.ref.name': as } });
  writeFileSync(indexFile, JSON.stringify(index));
}

/**
 * Unpacks the layout's image `tag` into `rootfs` with umoci (raw unpack, not unpack: no mtree of every file
 * for a repack that never comes). When its first layer is a test base's, that layer's rootfs, unpacked by
 * umoci once per digest, is copied in (cp -a: owners, modes, links and xattrs as umoci wrote them) and
 * umoci unpacks the image's other layers over it, as it would in one unpack of them all.
 */
function unpackRootfs(layout: string, tag: string, rootfs: string): void {
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8'));
  const at = index.manifests.find((m: { annotations?: Record<string, string> }) => m.annotations?.['org.opencontainers.image.ref.name'] === tag);
  const layers: Descriptor[] = JSON.parse(readFileSync(join(layout, 'blobs', ...at.digest.split(':')), 'utf8')).layers;
  if (layers.length < 2 || !isBaseLayer(layers[0].digest)) {
    execFileSync('umoci', ['raw', 'unpack', '--image', `${layout}:${tag}`, rootfs]);
    return;
  }
  const cached = join(BASE_ROOTFS, layers[0].digest.replace(':', '-'));
  if (!existsSync(cached)) {
    tagLayers(layout, tag, 'base-layer', (all) => all.slice(0, 1));
    mkdirSync(BASE_ROOTFS, { recursive: true });
    const made = `${cached}.${process.pid}.${Date.now()}`;
    try {
      execFileSync('umoci', ['raw', 'unpack', '--image', `${layout}:base-layer`, made]);
    } catch (err) {
      rmSync(made, { recursive: true, force: true });
      throw err;
    }
    // Another worker may have unpacked the same layer meanwhile: the first rename wins, and both are the same.
    try {
      renameSync(made, cached);
    } catch (err) {
      if (!existsSync(cached)) throw err;
      rmSync(made, { recursive: true, force: true });
    }
    // The layers of base images that are gone (an older recipe, node or Python) are never used again: 120 MB
    // each. Only those unused for an hour: another checkout's suite on this machine may still be copying one.
    for (const old of readdirSync(BASE_ROOTFS)) {
      const at = join(BASE_ROOTFS, old);
      if (/^sha256-[0-9a-f]{64}$/.test(old) && !isBaseLayer(old.replace('-', ':')) && Date.now() - statSync(at).mtimeMs > 3_600_000) rmSync(at, { recursive: true, force: true });
    }
  }
  // Its mtime says when it was last used (for the pruning above).
  utimesSync(cached, new Date(), new Date());
  execFileSync('cp', ['-a', cached, rootfs]);
  tagLayers(layout, tag, 'upper-layers', (all) => all.slice(1));
  execFileSync('umoci', ['raw', 'unpack', '--image', `${layout}:upper-layers`, rootfs]);
}

/**
 * Unpacks an image from the registry with skopeo + umoci into a runc bundle,
 * with the host's network (so a test can reach the server; `network: false`
 * keeps it offline) and a command of the test's choosing. Returns the bundle directory.
 *
 * The container lets bubblewrap make its sandbox, as `docker run --security-opt
 * systempaths=unconfined` does: /proc without masked paths (a nested /proc
 * mount is refused under them), and no ambient capabilities (docker gives a
 * non-root user none; bwrap refuses to run with some). `sandbox: false` keeps
 * runc's masked /proc: bwrap's namespaces are refused, as by docker's defaults.
 * `env` sets variables over the image's, as `docker run -e` does.
 */
export function unpackForRunc(reference: string, args?: string[], options: { network?: boolean; sandbox?: boolean; env?: Record<string, string> } = {}): string {
  const work = tempDir('forge-runc-');
  execFileSync('skopeo', ['copy', '--quiet', '--src-tls-verify=false', `docker://${reference}`, `oci:${join(work, 'layout')}:image`]);
  const bundle = join(work, 'bundle');
  const image = `${join(work, 'layout')}:image`;
  mkdirSync(bundle);
  unpackRootfs(join(work, 'layout'), 'image', join(bundle, 'rootfs'));
  const configFile = join(bundle, 'config.json');
  execFileSync('umoci', ['raw', 'runtime-config', '--image', image, '--rootfs', join(bundle, 'rootfs'), configFile]);
  const config = JSON.parse(readFileSync(configFile, 'utf8'));
  config.root.path = 'rootfs';
  config.process.terminal = false;
  if (args) config.process.args = args;
  // As `docker run -e`: over the image's own.
  for (const [name, value] of Object.entries(options.env ?? {})) config.process.env = [...config.process.env.filter((e: string) => !e.startsWith(`${name}=`)), `${name}=${value}`];
  // Sharing the host's network lets the test reach the server; without it the container is offline (loopback only).
  if (options.network !== false) config.linux.namespaces = config.linux.namespaces.filter((ns: { type: string }) => ns.type !== 'network');
  delete config.process.capabilities.ambient;
  delete config.process.capabilities.inheritable;
  if (options.sandbox !== false) {
    delete config.linux.maskedPaths;
    delete config.linux.readonlyPaths;
  }
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  return bundle;
}

export interface RuncContainer {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function runcRun(bundle: string): RuncContainer {
  const root = tempDir('forge-runc-state-');
  const id = `forge-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const child = spawn('runc', ['--root', root, 'run', '--bundle', bundle, id], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern, ms = 60_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          const m = pattern.exec(output);
          if (m) return resolve(m);
          if (child.exitCode !== null || Date.now() - started > ms) return reject(new Error(`container never printed ${pattern}:\n${output}`));
          setTimeout(check, 100);
        };
        check();
      }),
    async stop() {
      if (child.exitCode === null) {
        try {
          execFileSync('runc', ['--root', root, 'kill', id, 'KILL']);
        } catch {
          /* already gone */
        }
        await exited;
      }
      try {
        execFileSync('runc', ['--root', root, 'delete', '--force', id]);
      } catch {
        /* never created */
      }
    },
  };
}

