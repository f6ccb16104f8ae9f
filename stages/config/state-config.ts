/**
 * forge.yaml's `state:`: `file:` or a postgres:// URL. A password does not
 * belong in a file that is committed and copied into agent.json: it comes
 * from PGPASSWORD, or the whole URL from FORGE_STATE_URL.
 */
import { error, type Diagnostic } from '../../runtime/diagnostics.ts';
import type { YamlSource } from './yaml-source.ts';

export function checkStateConfig(state: string | undefined, source: YamlSource): Diagnostic[] {
  if (state === undefined) return [];
  if (/^postgres(ql)?:\/\/[^/@]*:[^/@]*@/i.test(state)) {
    return [error('FORGE_CONFIG_VALUE', '"state" holds a password, which would be copied into agent.json', source.locate(['state']), 'write postgres://USER@HOST/DATABASE and set PGPASSWORD, or set the whole URL in FORGE_STATE_URL')];
  }
  return [];
}
