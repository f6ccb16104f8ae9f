import { describe, expect, it } from 'vitest';
import { openStateStore } from '../../../runtime/state/open-store.ts';
import { redact } from '../../../runtime/state/shown-url.ts';

describe('redact', () => {
  it.each([
    ['postgres://forge:hunter2@db.internal:5432/agent', 'postgres://forge:***@db.internal:5432/agent'],
    ['postgres://:hunter3@db/agent', 'postgres://:***@db/agent'],
    ['postgresql://u:p@ss@word@db:5432/agent', 'postgresql://u:***@db:5432/agent'],
    ['postgres://forge@db/agent?password=hunter4&sslmode=require', 'postgres://forge@db/agent?…'],
    ['postgres://db/agent', 'postgres://db/agent'],
  ])('prints %s without its password', (url, shown) => {
    expect(redact(url)).toBe(shown);
  });

  it('says nothing of a URL it cannot read', () => {
    expect(redact('postgres://u:hunter5@[bad')).toBe('postgres:…');
  });

  it('keeps the password out of the error of a store that cannot be opened', async () => {
    const url = 'postgres://forge:hunter6@127.0.0.1:9/agent?password=hunter7';
    const failed = await openStateStore({ workDir: '/nonexistent', env: { FORGE_STATE_URL: url } }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failed?.message).toContain('postgres://forge:***@127.0.0.1:9/agent');
    expect(failed?.message).not.toMatch(/hunter/);
  });
});
