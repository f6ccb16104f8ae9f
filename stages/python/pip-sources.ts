/**
 * Where pip looked for packages, as pip itself said it ("Looking in
 * indexes: …", "Looking in links: …" on its standard output), and which of
 * those it said it could not reach: the sources a "not found" message names
 * are the ones pip used — the environment's, pip.conf's and its defaults'
 * alike — and "cannot be reached" is said only of a source pip failed to
 * connect to.
 */
const PYPI = 'https://pypi.org/simple';

export interface PipSources {
  indexes: string[];
  links: string[];
}

/** pip prints its indexes only when they are not PyPI alone (and none with no-index); its links whenever it has some. */
export function pipSources(stdout: string, env: NodeJS.ProcessEnv): PipSources {
  const listed = (label: string) => new RegExp(`^Looking in ${label}: (.*)$`, 'm').exec(stdout)?.[1].split(',').map((s) => s.trim()).filter(Boolean);
  const noIndex = /^(1|true|yes|on)$/i.test(env.PIP_NO_INDEX ?? '');
  return { indexes: listed('indexes') || (noIndex ? [] : [PYPI]), links: listed('links') || [] };
}

export function describeSources(sources: PipSources): string {
  const parts = [sources.indexes.length ? `index${sources.indexes.length > 1 ? 'es' : ''} ${sources.indexes.join(', ')}` : 'no index', ...(sources.links.length ? [`links ${sources.links.join(', ')}`] : [])];
  return parts.join('; ');
}

/**
 * The indexes pip said it could not connect to: its warnings name the path it asked for
 * (".../simple/NAME/"), matched to the index whose path it starts with. Undefined when pip
 * said nothing of the kind; an empty list when it did but the index is not told apart.
 */
export function unreachedIndexes(stderr: string, sources: PipSources): string[] | undefined {
  const failures = stderr.split('\n').filter((line) => /Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|ConnectTimeout|Max retries exceeded|Connection refused/.test(line));
  if (!failures.length) return undefined;
  const paths = failures.map((line) => /\)'?: (\/\S*)\s*$/.exec(line)?.[1]).filter((p): p is string => p !== undefined);
  return sources.indexes.filter((index) => {
    let path: string;
    try {
      path = new URL(index).pathname.replace(/\/?$/, '/');
    } catch {
      return false;
    }
    return paths.some((p) => p.startsWith(path));
  });
}

/** "; pip could not reach URL" for the indexes pip said it could not connect to, else nothing: the end of a "not found" message. */
export function unreachedNote(stderr: string, sources: PipSources): string {
  const unreached = unreachedIndexes(stderr, sources);
  return unreached === undefined ? '' : unreached.length ? `; pip could not reach ${unreached.join(', ')}` : '; pip could not reach some of them';
}
