/**
 * The store's pool says a store away in the one class the registry and the
 * servers answer FORGE_STATE_UNAVAILABLE for; the driver's line is its reason.
 * Port 1 on loopback: nothing listens there, the connection is refused.
 */
import { describe, expect, it } from 'vitest';
import { openPool, withClient } from '../../../runtime/state/pool-client.ts';
import { StateUnavailableError } from '../../../runtime/store-unavailable.ts';

describe('openPool', () => {
  it('rejects a statement on a store that refuses connections with StateUnavailableError, naming the driver\'s error', async () => {
    const pool = openPool({ host: '127.0.0.1', port: 1, user: 'nobody', database: 'nothing', connectionTimeoutMillis: 5000 });
    try {
      const queried = await pool.query('SELECT 1').catch((err: unknown) => err);
      expect(queried).toBeInstanceOf(StateUnavailableError);
      expect((queried as StateUnavailableError).reason).toMatch(/ECONNREFUSED/);
      const worked = await withClient(pool, (client) => client.query('SELECT 1')).catch((err: unknown) => err);
      expect(worked).toBeInstanceOf(StateUnavailableError);
      expect((worked as StateUnavailableError).reason).toMatch(/ECONNREFUSED/);
    } finally {
      await pool.end();
    }
  });
});
